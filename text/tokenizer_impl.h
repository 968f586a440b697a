/* What each tokenizer module fills in; private to text/tokenizer*.c and
 * text/bpe_gpt2.c. tokenizer.c dispatches through these pointers so that
 * adding a tokenizer touches one new file and one line of the name table. */
#ifndef COD_TEXT_TOKENIZER_IMPL_H
#define COD_TEXT_TOKENIZER_IMPL_H

#include "text/tokenizer.h"

struct tokenizer {
    const char *name;
    uint32_t vocab_size, doc_token;
    int doc_at;        /* TOK_DOC_START (set before open) or TOK_DOC_END */
    int64_t pad_token; /* -1 (set before open): none */
    uint32_t end_token; /* UINT32_MAX (set before open): the doc token */
    int adds_doc;      /* transformers' encode() starts a text with doc_token by default */
    int cuts;          /* tok_split_point's cuts hold (set before open); 0: a document is encoded whole */
    char files[512]; /* "name sha256\n" per file read */
    void *impl;
    void *(*session_new)(const void *impl);
    void (*session_free)(void *session);
    int (*encode)(const void *impl, void *session, const unsigned char *text, size_t len,
                  unsigned flags, struct tok_ids *out, char *err, size_t errlen);
    int (*decode)(const void *impl, const uint32_t *ids, size_t n, unsigned flags,
                  struct tok_text *out, char *err, size_t errlen);
    void (*free)(void *impl);
};

int gpt2_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen);
int llama_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen);
int bytes_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen);
/* dir: a tokenizer.json, or a folder holding one */
int hf_open(struct tokenizer *t, const char *dir, unsigned flags, char *err, size_t errlen);
int sentencepiece_open(struct tokenizer *t, const char *model, unsigned flags, char *err, size_t errlen);

/* Reads DIR/NAME, checks its sha256 against `pinned` unless TOK_NO_CHECKSUM,
 * and notes it in t->files. Same contract as fio_read_file(). */
int tok_read_file(struct tokenizer *t, const char *dir, const char *name, const char *pinned,
                  unsigned flags, unsigned char **data, size_t *len, char *err, size_t errlen);

#endif
