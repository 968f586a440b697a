/* What one cod-prep run holds while it works, shared by the files that do
 * its parts (private to prep/): prep_run.c sets the run up and tears it
 * down, pipeline.c reads the inputs in batches and writes their tokens,
 * publish.c writes meta.json and sources.txt and moves the staged output
 * into place. */
#ifndef COD_PREP_RUN_STATE_H
#define COD_PREP_RUN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "prep/doc_key.h"
#include "prep/inputs.h"
#include "prep/prep_run.h"
#include "prep/progress.h"
#include "prep/shard_sink.h"
#include "text/jsonl.h"
#include "text/tokenizer.h"

enum { TRAIN, VAL };

/* The shards' and meta.json's name of a split. */
static inline const char *prep_split_name(int split) { return split == VAL ? "val" : "train"; }

/* What each input file gave, for sources.txt. */
struct file_stat {
    int64_t bytes[2], tokens[2], docs[2];
    char sha[65];
};

struct run {
    const struct prep_opts *o;
    struct prep_result *res;
    struct tokenizer *tok;
    struct input_list in;
    struct jl_key key;
    struct dedup seen;
    struct file_stat *files;
    char stage[4096];
    int token_bytes, threads;
    struct shard_sink sink[2];
    struct tok_session **sess;
    struct progress pg;
    int64_t stored_done, text_done, docs_done;
};

/* pipeline.c: every input, in batches of about batch_bytes, into the
 * sinks; counts into r->res and r->files. 0, or -1 with err naming the
 * file (and line or row) at fault. */
int prep_pipeline(struct run *r, char *err, size_t errlen);

/* publish.c: sources.txt and meta.json written into the staging directory. */
int publish_meta(struct run *r, char *err, size_t errlen);
/* publish.c: the staged shards, sources.txt and meta.json moved into OUT,
 * replacing a previous run's. */
int publish_commit(struct run *r, char *err, size_t errlen);
/* publish.c: the staging directory and whatever is left in it removed. */
void publish_remove_stage(const char *stage);

#endif
