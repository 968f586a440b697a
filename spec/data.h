/* The data a job spec names, checked without reading a token: what
 * cod-server does with a submission, so that a spec whose files are
 * missing or are no token shards is refused at once, however large they
 * are. The full check that reads every token (the vocabulary of data
 * without meta.json) is the trainer's: trainer/data_check.h. */
#ifndef COD_SPEC_DATA_H
#define COD_SPEC_DATA_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/spec.h"

/* Checks that data.train and data.val each match at least one file, and
 * that every file is a token shard whose size matches its header. When
 * meta.json lies beside the first train shard, its vocab_size is the
 * data's vocabulary: *meta_vocab is set to it, model.vocab is filled from
 * it when the spec leaves it out, and a smaller model.vocab is refused.
 * Without meta.json *meta_vocab is 0 and model.vocab is left as it is.
 * data.packing "documents" also needs both sets' meta.json to name their
 * doc_token (spec_data_docs).
 * 0, or -1 with *err naming the field (data.train, data.val, model.vocab). */
int spec_check_files(struct job_spec *s, int *meta_vocab, struct spec_error *err);

/* What meta.json beside a shard set says of its documents (docs/formats.md):
 * known when it names a doc_token, which starts each document, or ends it
 * with doc_token_at "end" (T5's </s>); pad_token, when it has one, is the
 * tokenizer's padding id. */
struct data_docs {
    int known, at_end, has_pad;
    uint32_t doc_token, pad_token;
    char missing[PATH_MAX + 160];  /* when not known: why, naming the file */
};

/* Reads meta.json beside the first file pattern matches (field names the
 * shard set in a refusal). 0, with d->known 0 when there is no meta.json or
 * it names no doc_token; -1 when it is unreadable or its ids are invalid. */
int spec_data_docs(const char *pattern, const char *field, struct data_docs *d,
                   struct spec_error *err);

/* Calls fn on every file pattern matches, in name order, stopping at the
 * first that fails. A pattern that matches nothing, or a failure, is
 * refused naming field; fn writes its reason into msg. */
typedef int (*spec_file_fn)(const char *path, void *ctx, char *msg, size_t msglen);
int spec_each_file(const char *pattern, const char *field, spec_file_fn fn, void *ctx,
                   struct spec_error *err);

#endif
