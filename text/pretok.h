/* Text cut into pieces by a pre-tokenizer regex (PCRE2, Unicode classes,
 * JIT), the first step of the byte-level BPE tokenizers (GPT-2's, and a
 * tokenizer.json's Split). The bytes between matches (invalid UTF-8, which
 * the regex cannot match) form pieces of their own, so that they still
 * round-trip; an empty match gives its next character as a piece. */
#ifndef COD_TEXT_PRETOK_H
#define COD_TEXT_PRETOK_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stddef.h>

/* NULL with msg (PCRE2's message and the offset) when it does not compile. */
pcre2_code *pretok_compile(const char *pattern, char *msg, size_t msglen);

/* A thread's match state. */
struct pretok {
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    pcre2_jit_stack *jit;
};

int pretok_init(struct pretok *s, const pcre2_code *re); /* 0, or -1: out of memory */
void pretok_free(struct pretok *s);

/* Calls piece(ctx, p, n, err, errlen) for each piece in order; stops at
 * the first that fails. who names the tokenizer in a match error. */
int pretok_split(const pcre2_code *re, struct pretok *s, const unsigned char *text, size_t len,
                 int (*piece)(void *ctx, const unsigned char *p, size_t n, char *err,
                              size_t errlen),
                 void *ctx, const char *who, char *err, size_t errlen);

#endif
