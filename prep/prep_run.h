/* cod-prep's work as a library call, so that tests can drive it and check
 * its errors without spawning the program: documents in, llm.c token
 * shards, meta.json and sources.txt out.
 *
 * Documents: a text file is one; a JSON-lines file (prep/inputs.h) gives
 * one per line, its text at a key path (text/jsonl.h), and a line that
 * gives none is counted, its first few reported with file and line, and
 * skipped (with `strict`, the first one fails the run). A document met
 * again (prep/doc_key.h: the same text up to whitespace) is kept once,
 * the first time. Each document goes to the split of its input (--val)
 * or, without val inputs, to val when its key says so (a hash: adding or
 * reordering inputs moves no document); --split paragraphs:N then cuts it
 * into pieces that are documents of their own (prep/paragraphs.h), on the
 * same side. Each document is written with the tokenizer's doc token
 * before or after it into train_NNNNNN.bin or val_NNNNNN.bin, each
 * shard_tokens long but the last.
 *
 * Streamed: the inputs are read ahead by threads of their own
 * (prep/reader.h) and taken in batches of about batch_bytes of text,
 * which every thread parses, cuts and encodes at once; shards are written
 * as their tokens come. Memory is bounded by the batch and the read-ahead
 * whatever the inputs' size, but for the table of documents seen (32 to
 * 64 bytes a distinct document) and one document, which is held whole.
 * The output appears all at once: shards and meta.json are written to a
 * staging directory inside OUT and renamed into place only when
 * everything succeeded, so a failed run leaves OUT as it was and never a
 * partial shard under a final name. */
#ifndef COD_PREP_PREP_RUN_H
#define COD_PREP_PREP_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "text/jsonl.h"

#define PREP_DEFAULT_SHARD_TOKENS 100000000LL
#define PREP_DEFAULT_VAL_FRACTION 0.1
#define PREP_DEFAULT_TEXT_KEY "text"

struct prep_opts {
    const char *tokenizer;        /* gpt2 | llama | bytes | sentencepiece */
    const char *tokenizer_dir;    /* NULL: TOK_DEFAULT_DIR */
    const char *tokenizer_model;  /* sentencepiece: the .model file */
    unsigned tokenizer_flags;     /* TOK_NO_CHECKSUM, for tests */
    const char *out_dir;
    const char *const *inputs;    /* files, or directories walked in name order */
    int n_inputs;
    const char *const *val_inputs; /* held-out documents; when given, val_fraction is not used */
    int n_val_inputs;
    double val_fraction;          /* the share of documents held out, chosen by their keys */
    const char *text_key;         /* JSON lines: the text's key path (NULL: "text") */
    int strict;                   /* the first bad JSON line fails the run */
    int64_t split_tokens;         /* > 0: --split paragraphs:N */
    int64_t shard_tokens;
    int threads;                  /* 0: all OpenMP threads */
    int verify;                   /* decode every document again and compare */
    int progress;                 /* 1: a progress bar on stderr; 0: none; -1 (default): when stderr is a terminal */
    size_t chunk_bytes;           /* 0: default; a long document is cut near this size to spread over threads */
    size_t batch_bytes;           /* 0: default; text taken per round */
    size_t block_bytes;           /* 0: default; JSON lines read per block */
};

struct prep_split_result {
    int64_t documents, bytes, tokens;
    int shards;
};

#define PREP_SHOWN 10

struct prep_result {
    struct prep_split_result split[2]; /* train, val */
    int64_t files;
    int64_t read;                 /* documents read (text files, JSON lines and Parquet rows with text) */
    int64_t skipped[JL_KINDS];    /* JSON lines and Parquet rows without text, by kind ([JL_OK] unused) */
    int64_t parquet_files, parquet_groups, parquet_rows; /* what was read of Parquet files */
    int64_t skipped_total;
    int64_t duplicates;           /* documents dropped as seen before */
    int64_t cut;                  /* documents --split cut into more than one */
    char shown[PREP_SHOWN][700];  /* the first skipped lines: "FILE:LINE: why" ("FILE: row N: why") */
    int n_shown;
    double seconds;
};

void prep_opts_default(struct prep_opts *o);
/* 0 on success; -1 with err naming the file and the problem. r is filled
 * in either case (a failed run's counts are those up to the failure). */
int prep_run(const struct prep_opts *o, struct prep_result *r, char *err, size_t errlen);

#endif
