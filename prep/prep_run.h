/* cod-prep's work as a library call, so that tests can drive it and check
 * its errors without spawning the program: documents in, llm.c token shards
 * and meta.json out.
 *
 * Every input file is one document. Each document is written as the
 * tokenizer's doc token followed by its tokens, into train_NNNNNN.bin or
 * val_NNNNNN.bin (each shard_tokens long but the last). The output appears
 * all at once: shards and meta.json are written to a staging directory
 * inside OUT and renamed into place only when everything succeeded, so a
 * failed run leaves OUT as it was and never a partial shard under a final
 * name. */
#ifndef COD_PREP_PREP_RUN_H
#define COD_PREP_PREP_RUN_H

#include <stddef.h>
#include <stdint.h>

#define PREP_DEFAULT_SHARD_TOKENS 100000000LL
#define PREP_DEFAULT_VAL_FRACTION 0.1

struct prep_opts {
    const char *tokenizer;        /* gpt2 | llama | bytes */
    const char *tokenizer_dir;    /* NULL: TOK_DEFAULT_DIR */
    unsigned tokenizer_flags;     /* TOK_NO_CHECKSUM, for tests */
    const char *out_dir;
    const char *const *inputs;    /* files, or directories whose files are taken in name order */
    int n_inputs;
    const char *const *val_inputs; /* held-out documents; when given, val_fraction is not used */
    int n_val_inputs;
    double val_fraction;          /* of the documents, evenly spaced: 0.1 = every tenth */
    int64_t shard_tokens;
    int threads;                  /* 0: all OpenMP threads */
    int verify;                   /* decode every document again and compare */
    int progress;                 /* 1: progress bar on stderr */
    size_t chunk_bytes;           /* 0: default; a long document is cut near this size to spread over threads */
    size_t batch_bytes;           /* 0: default; text read per round */
};

struct prep_split_result {
    int64_t documents, bytes, tokens;
    int shards;
};

struct prep_result {
    struct prep_split_result split[2]; /* train, val */
    double seconds;
};

void prep_opts_default(struct prep_opts *o);
/* 0 on success; -1 with err naming the file and the problem. */
int prep_run(const struct prep_opts *o, struct prep_result *r, char *err, size_t errlen);

#endif
