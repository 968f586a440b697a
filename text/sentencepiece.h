/* Debian's libsentencepiece behind a C interface. The library is C++ and
 * has no C API, and a SentencePiece model is the library's to run (its
 * normaliser, unigram lattice and BPE are what T5 and LLaMA were trained
 * with; a copy of our own could only drift from them), so
 * text/sentencepiece.cc is the one C++ file outside kernels/cuda/: it only
 * forwards these calls and turns the library's statuses and exceptions
 * into errors. text/tokenizer_sentencepiece.c makes a tokenizer of it.
 * Encoding is thread-safe: every thread may call spm_encode on one model. */
#ifndef COD_TEXT_SENTENCEPIECE_H
#define COD_TEXT_SENTENCEPIECE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spm;

/* A model from the bytes of a .model file (a serialized ModelProto).
 * NULL with err when the library refuses them. */
struct spm *spm_load(const void *model, size_t len, char *err, size_t errlen);
void spm_free(struct spm *m);

int spm_vocab_size(const struct spm *m);
/* The special ids, -1 where the model has none. */
int spm_bos_id(const struct spm *m);
int spm_eos_id(const struct spm *m);
int spm_pad_id(const struct spm *m);
int spm_unk_id(const struct spm *m);

/* Appends the ids of text (the library's own Encode, no bos or eos) to
 * *ids (realloc'ed; *n and *cap as a growable array). 0, or -1 with err. */
int spm_encode(const struct spm *m, const unsigned char *text, size_t len, uint32_t **ids, size_t *n, size_t *cap,
               char *err, size_t errlen);
/* The library's Decode of ids into a malloc'ed string (*out, *out_len). */
int spm_decode(const struct spm *m, const uint32_t *ids, size_t n, char **out, size_t *out_len, char *err,
               size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
