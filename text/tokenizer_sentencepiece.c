/* The sentencepiece tokenizer: a SentencePiece .model file run by
 * libsentencepiece (text/sentencepiece.h). The document boundary is the
 * model's own: its <s> before each document where it has one (LLaMA's
 * tokenizer.model: <s> 1), else its </s> after each (T5's spiece.model:
 * </s> 1, and pad 0); a model with neither is refused. A document is
 * encoded whole (no cuts): the model's normaliser trims and merges
 * whitespace, so a piece cut from the middle does not encode as it does in
 * place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "text/sentencepiece.h"
#include "text/sha256.h"
#include "text/tokenizer_impl.h"

static int spm_tok_encode(const void *impl, void *session, const unsigned char *text, size_t len, unsigned flags,
                          struct tok_ids *out, char *err, size_t errlen)
{
    (void)session, (void)flags;
    return spm_encode(impl, text, len, &out->v, &out->n, &out->cap, err, errlen);
}

static int spm_tok_decode(const void *impl, const uint32_t *ids, size_t n, unsigned flags, struct tok_text *out,
                          char *err, size_t errlen)
{
    (void)flags;
    uint32_t vocab = (uint32_t)spm_vocab_size(impl);
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= vocab) {
            snprintf(err, errlen, "sentencepiece: token id %u at %zu is outside the vocabulary (%u)", ids[i], i,
                     vocab);
            return -1;
        }
    char *text = NULL;
    size_t len = 0;
    if (spm_decode(impl, ids, n, &text, &len, err, errlen) != 0)
        return -1;
    int rc = tok_text_append(out, text, len);
    free(text);
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    return rc;
}

static void spm_tok_free(void *impl) { spm_free(impl); }

int sentencepiece_open(struct tokenizer *t, const char *model, unsigned flags, char *err, size_t errlen)
{
    unsigned char *data = NULL;
    size_t len = 0;
    char sha[65];
    (void)flags; /* no pinned sha256: any model will do, and meta.json records which */
    if (fio_read_file(model, &data, &len, err, errlen) != 0)
        return -1;
    if (sha256_hex(data, len, sha) != 0) {
        snprintf(err, errlen, "%s: cannot compute its sha256 (libcrypto failed)", model);
        free(data);
        return -1;
    }
    const char *slash = strrchr(model, '/');
    snprintf(t->files, sizeof(t->files), "%s %s\n", slash ? slash + 1 : model, sha);
    char why[1024];
    struct spm *m = spm_load(data, len, why, sizeof(why));
    free(data);
    if (!m) {
        snprintf(err, errlen, "%s: %s", model, why);
        return -1;
    }
    int bos = spm_bos_id(m), eos = spm_eos_id(m);
    if (bos < 0 && eos < 0) {
        snprintf(err, errlen, "%s: the model has neither <s> nor </s>: no token marks where a document ends",
                 model);
        spm_free(m);
        return -1;
    }
    t->vocab_size = (uint32_t)spm_vocab_size(m);
    t->doc_token = (uint32_t)(bos >= 0 ? bos : eos);
    t->doc_at = bos >= 0 ? TOK_DOC_START : TOK_DOC_END;
    t->adds_doc = bos >= 0;
    t->pad_token = spm_pad_id(m);
    t->end_token = (uint32_t)(eos >= 0 ? eos : bos);
    t->cuts = 0;
    t->impl = m;
    t->encode = spm_tok_encode;
    t->decode = spm_tok_decode;
    t->free = spm_tok_free;
    return 0;
}
