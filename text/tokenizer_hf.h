/* What tokenizer_hf.c (encoding) and tokenizer_hf_read.c (reading
 * tokenizer.json into it) share: a Hugging Face tokenizer as cod holds it.
 * Private to those two files. */
#ifndef COD_TEXT_TOKENIZER_HF_H
#define COD_TEXT_TOKENIZER_HF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "text/bpe.h"
#include "text/pretok.h"
#include "text/strmap.h"

#define SPACE_UTF8 "\xe2\x96\x81" /* ▁ */

struct hf {
    int byte_level, nfc, ignore_merges, prefix, split_words;
    pcre2_code *re;
    uint32_t vocab, doc_token;
    int adds_doc;          /* the post_processor puts the doc token first */
    uint32_t end_token;    /* the end of an answer the file adds, else UINT32_MAX */
    unsigned char *text;   /* every id's decoded bytes, back to back */
    uint32_t *off, *len;   /* id -> its bytes; len UINT32_MAX: no such id */
    struct strmap map;     /* byte-level: a token's bytes; SentencePiece: its piece as written */
    struct bpe_pairs pairs;
    uint32_t byte_id[256]; /* byte-level: each byte's token; SentencePiece: <0xXX> */
    uint32_t space_id;     /* SentencePiece: "▁" */
};

/* Fills *h from a parsed tokenizer.json read from path: the pipeline, the
 * model, the doc token, the regex. 0, or -1 with err naming the file and
 * the field. */
int hf_read(struct hf *h, json_t *root, const char *path, char *err, size_t errlen);

#endif
