/* A task built from held-out text, which a model that learned anything of
 * its language beats chance on and a fresh one does not: a cloze of K
 * passages (a few hundred characters each, whole sentences) and their K
 * true next sentences, from K documents, the sentences of near lengths.
 * An item is one of the sentences; its choices the K passages; the model
 * is right when the sentence is likelier after its own passage than after
 * the others (the generic layout's contexts form, scored as WinoGrande
 * is). Scoring the K sentences after one passage instead would compare the
 * sentences' own likelihoods, which differ by several nats, more than
 * their fit to the passage, a fraction of a nat for a model of make
 * demo's size. A model blind to the passage picks its gold by chance,
 * 1/K. */
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
 * {"contexts", "continuation", "gold", "doc"}. *made: the items written. 0, or
 * -1 with err (a file unreadable, too few sentences for K choices). */
int cloze_build(char *const *paths, int n_paths, const struct cloze_opts *o, FILE *out, int *made,
                char *err, size_t errlen);

#endif
