/* The tokenizer a model reads text with, and what the BOS policy's "auto"
 * makes of it (docs/eval.md): a cod model's is its data's, named by
 * meta.json beside its shards, the doc token put first where the data
 * starts each document with it, as the model was trained; a Hugging Face
 * folder's is its tokenizer.json (or tokenizer.model), the doc token put
 * first where transformers' encode() puts it (lm-evaluation-harness
 * v0.4.12's default: the tokenizer's own). */
#ifndef COD_EVAL_TOKENIZER_OF_H
#define COD_EVAL_TOKENIZER_OF_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "text/tokenizer.h"

struct eval_tokenizer {
    struct tokenizer *tok;
    int bos;            /* "auto"'s answer */
    uint32_t doc;
    char what[PATH_MAX + 64]; /* where it came from, for a log line */
};

/* A cod model's, from meta.json beside the first file `pattern` (its
 * data.train) matches. dir: where gpt2's and llama's files are (NULL:
 * TOK_DEFAULT_DIR); file: an hf or sentencepiece data's tokenizer.json or
 * .model (NULL: the name meta.json records, beside the shards). The files
 * read must be those meta.json records (their sha256). 0, or -1 with err. */
int eval_tokenizer_of_data(const char *pattern, const char *dir, const char *file,
                           struct eval_tokenizer *t, char *err, size_t errlen);
/* A Hugging Face folder's: DIR/tokenizer.json, else DIR/tokenizer.model. */
int eval_tokenizer_of_folder(const char *dir, struct eval_tokenizer *t, char *err, size_t errlen);

#endif
