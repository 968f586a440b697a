/* The bytes tokenizer: token i is byte i, and 256 marks a document start.
 * It needs no file and suits the smallest CPU runs and tests. */
#include <stdio.h>

#include "text/tokenizer_impl.h"

#define BYTES_DOC 256

static int bytes_encode(const void *impl, void *session, const unsigned char *text, size_t len,
                        unsigned flags, struct tok_ids *out, char *err, size_t errlen)
{
    (void)impl, (void)session, (void)flags;
    if (tok_ids_reserve(out, len) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        out->v[out->n++] = text[i];
    return 0;
}

static int bytes_decode(const void *impl, const uint32_t *ids, size_t n, unsigned flags,
                        struct tok_text *out, char *err, size_t errlen)
{
    (void)impl, (void)flags;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == BYTES_DOC)
            continue;
        if (ids[i] > 255) {
            snprintf(err, errlen, "bytes: token id %u at %zu is outside the vocabulary (257)", ids[i], i);
            return -1;
        }
        unsigned char c = (unsigned char)ids[i];
        if (tok_text_append(out, &c, 1) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

int bytes_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen)
{
    (void)dir, (void)flags, (void)err, (void)errlen;
    t->vocab_size = 257;
    t->doc_token = BYTES_DOC;
    t->encode = bytes_encode;
    t->decode = bytes_decode;
    return 0;
}
