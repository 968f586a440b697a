/* For the tokenizer harnesses: text encoded by a loaded tokenizer in a
 * session of its own and decoded back. Neither may fail on text and ids of
 * its own making, whatever vocabulary was loaded: a failure stops the
 * fuzzer. */
#ifndef COD_FUZZ_TOK_ROUND_TRIP_H
#define COD_FUZZ_TOK_ROUND_TRIP_H

#include "text/tokenizer.h"

/* decode(encode(text)) into *back (caller frees with tok_text_free). */
void tok_round_trip(const struct tokenizer *t, const unsigned char *text, size_t n, unsigned flags,
                    struct tok_text *back);

#endif
