/* The data a job spec names, checked without reading a token: what
 * cod-server does with a submission, so that a spec whose files are
 * missing or are no token shards is refused at once, however large they
 * are. The full check that reads every token (the vocabulary of data
 * without meta.json) is the trainer's: trainer/data_check.h. */
#ifndef COD_SPEC_DATA_H
#define COD_SPEC_DATA_H

#include <stddef.h>

#include "spec/spec.h"

/* Checks that data.train and data.val each match at least one file, and
 * that every file is a token shard whose size matches its header. When
 * meta.json lies beside the first train shard, its vocab_size is the
 * data's vocabulary: *meta_vocab is set to it, model.vocab is filled from
 * it when the spec leaves it out, and a smaller model.vocab is refused.
 * Without meta.json *meta_vocab is 0 and model.vocab is left as it is.
 * 0, or -1 with *err naming the field (data.train, data.val, model.vocab). */
int spec_check_files(struct job_spec *s, int *meta_vocab, struct spec_error *err);

/* Calls fn on every file pattern matches, in name order, stopping at the
 * first that fails. A pattern that matches nothing, or a failure, is
 * refused naming field; fn writes its reason into msg. */
typedef int (*spec_file_fn)(const char *path, void *ctx, char *msg, size_t msglen);
int spec_each_file(const char *pattern, const char *field, spec_file_fn fn, void *ctx,
                   struct spec_error *err);

#endif
