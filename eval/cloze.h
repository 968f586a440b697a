/* A task built from held-out text, which a model that learned anything of
 * its language beats chance on and a fresh one does not: a cloze (the
 * generic layout), each item a passage's last few hundred characters, its
 * true next sentence the gold among sentences that follow passages of
 * other documents. Every candidate is some item's true next sentence, of a
 * length near the gold's, so a model blind to the passage picks the gold
 * only by chance: 1/K. */
#ifndef COD_EVAL_CLOZE_H
#define COD_EVAL_CLOZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cloze_opts {
    int items;          /* at most (fewer where the text has fewer sentences) */
    int choices;        /* K */
    uint64_t seed;
    int context_chars;  /* the passage: whole sentences within this many characters */
    int min_chars, max_chars; /* a candidate sentence's length */
};

/* Text files and the files under folders (name order; .gz, .zst, .xz as
 * cod-prep reads them), a document each, into JSON lines on out:
 * {"context", "choices", "gold", "doc"}. *made: the items written. 0, or
 * -1 with err (a file unreadable, too few sentences for K choices). */
int cloze_build(char *const *paths, int n_paths, const struct cloze_opts *o, FILE *out, int *made,
                char *err, size_t errlen);

#endif
