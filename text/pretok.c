#include "text/pretok.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"

pcre2_code *pretok_compile(const char *pattern, char *msg, size_t msglen)
{
    int ecode;
    PCRE2_SIZE eoff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &ecode, &eoff,
                                   NULL);
    if (!re) {
        PCRE2_UCHAR m[256];
        pcre2_get_error_message(ecode, m, sizeof(m));
        snprintf(msg, msglen, "does not compile at %zu: %s", (size_t)eoff, (const char *)m);
        return NULL;
    }
    /* Without JIT (some platforms) the interpreter gives the same matches, slower. */
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

int pretok_init(struct pretok *s, const pcre2_code *re)
{
    s->md = pcre2_match_data_create_from_pattern(re, NULL);
    s->mctx = pcre2_match_context_create(NULL);
    /* Long runs of letters or spaces need more than JIT's default 32 kB. */
    s->jit = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, NULL);
    if (!s->md || !s->mctx || !s->jit) {
        pretok_free(s);
        return -1;
    }
    pcre2_jit_stack_assign(s->mctx, NULL, s->jit);
    return 0;
}

void pretok_free(struct pretok *s)
{
    pcre2_match_data_free(s->md);
    pcre2_match_context_free(s->mctx);
    pcre2_jit_stack_free(s->jit);
    memset(s, 0, sizeof(*s));
}

int pretok_split(const pcre2_code *re, struct pretok *s, const unsigned char *text, size_t len,
                 int (*piece)(void *ctx, const unsigned char *p, size_t n, char *err,
                              size_t errlen),
                 void *ctx, const char *who, char *err, size_t errlen)
{
    size_t pos = 0;
    while (pos < len) {
        int rc = pcre2_match(re, text, len, pos, 0, s->md, s->mctx);
        if (rc == PCRE2_ERROR_NOMATCH)
            return piece(ctx, text + pos, len - pos, err, errlen);
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof(msg));
            snprintf(err, errlen, "%s pre-tokenizer at byte %zu: %s", who, pos, (const char *)msg);
            return -1;
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
        size_t a = ov[0], b = ov[1];
        if (b <= pos) {
            size_t k = utf8_len(text + pos, len - pos);
            a = pos;
            b = pos + (k ? k : 1);
        }
        if (a > pos && piece(ctx, text + pos, a - pos, err, errlen) != 0)
            return -1;
        if (piece(ctx, text + a, b - a, err, errlen) != 0)
            return -1;
        pos = b;
    }
    return 0;
}
