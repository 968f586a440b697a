/* --split paragraphs:N: a document cut at its blank lines into pieces of
 * at most about N tokens, each piece then a document of its own.
 *
 * A paragraph is a run of lines that hold something besides whitespace;
 * blank lines (empty, or spaces, tabs and CRs only) separate them. Pieces
 * are whole consecutive paragraphs with what lies between them, taken
 * greedily while the tokens of the paragraphs and their separators, each
 * counted on its own, stay within N. A paragraph longer than N alone is
 * the only place a cut falls inside one: at whitespace (or, in a run
 * without any, between characters), each part checked to encode within N.
 * A document within N is left whole, its text as it was. N counts the
 * text's tokens, not the doc token. */
#ifndef COD_PREP_PARAGRAPHS_H
#define COD_PREP_PARAGRAPHS_H

#include <stddef.h>
#include <stdint.h>

#include "text/tokenizer.h"

struct piece {
    size_t off, len;
};

struct pieces {
    struct piece *v;
    size_t n, cap;
};

void pieces_free(struct pieces *p);

/* Appends the pieces of text to out, counting tokens with s (scratch is
 * the caller's, reused). 0, or -1 with err (out of memory, the encoder's
 * error). */
int para_cut(struct tok_session *s, const unsigned char *text, size_t len, int64_t max_tokens, struct pieces *out,
             struct tok_ids *scratch, char *err, size_t errlen);

#endif
