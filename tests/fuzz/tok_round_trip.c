/* Encode, then decode, for the tokenizer harnesses: see tok_round_trip.h. */
#include "tests/fuzz/tok_round_trip.h"

#include "tests/fuzz/fuzz_util.h"

void tok_round_trip(const struct tokenizer *t, const unsigned char *text, size_t n, unsigned flags,
                    struct tok_text *back)
{
    char err[512];
    struct tok_session *s = tok_session_new(t, err, sizeof err);
    if (!s)
        fuzz_die("%s", err);
    struct tok_ids ids = {0};
    *back = (struct tok_text){0};
    if (tok_encode(s, text, n, flags, &ids, err, sizeof err) != 0 ||
        tok_decode(t, ids.v, ids.n, flags, back, err, sizeof err) != 0)
        fuzz_die("%s: %s", tokenizer_name(t), err);
    tok_ids_free(&ids);
    tok_session_free(s);
}
