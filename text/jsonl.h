/* One line of a JSON-lines file (C4, Dolma, The Pile, RedPajama, ...)
 * turned into a document's text: the string at a key path ("text", or a
 * dotted path such as "meta.body" for a nested field). A line that gives
 * no text says why, as one of the kinds below, which cod-prep counts and
 * reports with the file and line. */
#ifndef COD_TEXT_JSONL_H
#define COD_TEXT_JSONL_H

#include <stddef.h>

enum jl_fault {
    JL_OK,
    JL_MALFORMED,    /* not a JSON object (a syntax error, a blank line, an array) */
    JL_MISSING_KEY,  /* the key path leads nowhere */
    JL_NOT_STRING,   /* the value there is a number, null, an object, ... */
    JL_INVALID_UTF8, /* the line is not UTF-8 (JSON must be) */
    JL_EMPTY,        /* the text is "" */
    JL_KINDS
};

/* A kind as the summary names it: "malformed", "missing key", ... */
const char *jl_fault_name(enum jl_fault f);

#define JL_MAX_DEPTH 16
struct jl_key {
    char *parts[JL_MAX_DEPTH];
    int n;
    char *spec; /* as given */
};

/* "a.b.c" into its parts. 0, or -1 with err (an empty part, too deep). */
int jl_key_parse(struct jl_key *k, const char *dotted, char *err, size_t errlen);
void jl_key_free(struct jl_key *k);

/* The text of one line (without its newline). JL_OK with *text (malloc'ed,
 * NUL-terminated, valid UTF-8, may hold NULs) and *len; otherwise the
 * kind, and why[] says what was found; JL_KINDS when out of memory. */
enum jl_fault jl_line_text(const struct jl_key *k, const char *line, size_t len, char **text, size_t *text_len,
                           char *why, size_t whylen);

#endif
