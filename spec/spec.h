/* The job spec (docs/spec.md): one experiment's model, normalization
 * variant, data, training recipe, cadences and resources. Parsing fills
 * every omitted field from the paper's recipe and refuses a bad value by
 * naming its field; the JSON form writes every default explicitly. Pure:
 * it touches no file (the data checks are spec/data.h), so cod-server
 * validates submissions with this same module and nothing the trainer would
 * refuse is ever queued. */
#ifndef COD_SPEC_H
#define COD_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spec/variant.h"

struct model_shape {
    char preset[32];   /* preset name, or "custom" for the object form */
    int dim, n_layers, n_heads, ffn_dim;
    int vocab;         /* 0 until known: from meta.json (spec/data.h) or the tokens (trainer/data_check.h) */
    double embed_std;  /* the embedding's init std; not part of the shape (a preset stays one) */
    /* RoPE's base and RMSNorm's epsilon: 10000 and 1e-6 unless a pretrained
     * model started from (init.from) has others */
    double rope_theta, norm_eps;
};

/* mixed: fp32 master weights and Adam moments; bf16: the weights and both
 * moments held in bf16 between updates, as the paper's trainer does */
enum precision { PRECISION_MIXED, PRECISION_BF16 };
/* stream: documents packed end to end into rows; documents: one document a
 * row from its doc token, truncated or right-padded, pads not counted */
enum packing { PACKING_STREAM, PACKING_DOCUMENTS };
/* shards: token shards (docs/formats.md); instructions: JSON records of
 * instructions and responses, tokenized by the worker with its starting
 * checkpoint's tokenizer (sft/, docs/finetune.md) */
enum data_format { FORMAT_SHARDS, FORMAT_INSTRUCTIONS };
/* after the warmup: cosine down to min_lr_ratio · lr, or linear (as
 * Hugging Face's Trainer decays by default) */
enum schedule { SCHEDULE_COSINE, SCHEDULE_LINEAR };

struct train_cfg {
    long steps;        /* 0 while train.epochs stands in for it and the data is not counted */
    double epochs;     /* 0: none; else passes over the rows, steps found from the data */
    int seq_len, batch_seqs, micro_batch;
    double lr;
    long warmup;       /* -1: a tenth of the steps the data gives (with epochs) */
    double min_lr_ratio, beta1, beta2, eps, weight_decay, clip;
    uint64_t seed;
    enum precision precision;
    enum schedule schedule;
};

/* Where a run's weights start (init.from): the seed's init, a cod
 * checkpoint or a Hugging Face folder (a path on every worker), or an
 * experiment's final checkpoint, found under the worker's work dir. */
enum init_kind_from { INIT_SEED, INIT_PATH, INIT_EXPERIMENT };
struct init_from {
    enum init_kind_from kind;
    char path[1024];
    int64_t experiment;
};

/* Instruction data (data.format "instructions"; docs/finetune.md). */
struct sft_cfg {
    char recipe[32];       /* "none", "llm-adapters" or "owlore": the defaults it set */
    int train_on_inputs;   /* the loss over the prompt's tokens too */
    int cutoff_len;        /* a record's tokens at most (the end token included); 0: none */
    int pack;              /* records end to end in blocks of seq_len + 1 tokens */
    long val_size;         /* records held out of data.train when data.val is "" */
};

/* The experiments one may wait for (after). */
enum { SPEC_MAX_AFTER = 64 };

/* A task of analysis.tasks (docs/spec.md, docs/eval.md): a file of
 * multiple-choice items evaluated at the job's end. */
enum { SPEC_MAX_TASKS = 16 };
struct spec_task {
    char file[1024];
    char layout[24];          /* "": the file's fields say */
    char fewshot_from[1024];  /* "": the file itself */
    int shots;
    long limit;               /* items at most; 0: all */
};

struct job_spec {
    char name[128];
    struct model_shape model;
    struct norm_variant norm;
    char train_glob[1024], val_glob[1024];
    enum packing packing;
    enum data_format format;
    struct init_from init;
    /* model and norm left out with init.from: the checkpoint's, known once
     * the worker reads it (sft/start.h); until then the JSON form leaves
     * them out */
    int model_from_init, norm_from_init;
    struct sft_cfg sft;
    int64_t after[SPEC_MAX_AFTER];  /* experiments that must succeed first */
    int n_after;
    struct train_cfg train;
    long eval_every, eval_tokens;
    long eval_train_tokens; /* training targets evaluated beside them (0: none) */
    long stats_every;
    long checkpoint_every;  /* steps between checkpoints (0: only at the end and on stop) */
    int checkpoint_keep;    /* newest checkpoints kept on disk */
    int analysis_angular, analysis_prune;
    struct spec_task tasks[SPEC_MAX_TASKS];
    int n_tasks;
    char device[16];        /* "cpu", "cuda" or "any" */
    int gpus;
    int priority, max_attempts;
};

struct spec_error {
    char field[128];        /* dotted path of the offending field, e.g. "train.lr" */
    char message[512];
};

/* Parses and validates a spec held in a JSON text. Omitted fields take the
 * recipe's values. Returns 0, or -1 with *err naming the field. Touches no file. */
int spec_parse(const char *text, size_t len, struct job_spec *out, struct spec_error *err);
int spec_from_json(json_t *root, struct job_spec *out, struct spec_error *err);

/* The complete spec as JSON (every default explicit); parsing it back gives
 * the same spec. Caller owns the reference. NULL only on out-of-memory. */
json_t *spec_to_json(const struct job_spec *s);

/* The key a section's name goes under in its object form: "norm": "lns"
 * is {"base": "lns"}, "model": "llama-9m" is {"preset": "llama-9m"}; NULL
 * for a section that has no name form. A sweep's grid key inside such a
 * section (norm.gains) turns the base's name into that form first. */
const char *spec_name_key(const char *section);

/* The names of the string values of train.precision, data.packing,
 * data.format and train.schedule. */
const char *spec_precision_name(enum precision p);
const char *spec_packing_name(enum packing p);
const char *spec_format_name(enum data_format f);
const char *spec_schedule_name(enum schedule s);

/* Whether a row may hold fewer targets than seq_len (pads, or a prompt the
 * loss leaves out): documents packing and instruction data. */
int spec_rows_partial(const struct job_spec *s);
/* The experiment a run must wait for, every one: after, and init.from's
 * experiment; *n of them into ids (at most SPEC_MAX_AFTER + 1). */
int spec_waits_for(const struct job_spec *s, int64_t *ids);

/* A complete spec written before train.precision, data.packing,
 * model.embed_std and norm.gains existed (a checkpoint's state.json of
 * that time) says what it ran once they are written in with the values of
 * that time: mixed precision, stream packing, learned gains, the embedding
 * from N(0, √0.4). Only what is missing goes in, and only into sections
 * that are objects (schema/recipe_fields.sql does the same to the server's
 * stored specs). 0, or -1 when out of memory. */
int spec_upgrade(json_t *spec);

/* analysis.tasks from its JSON (absent: none): 0, or -1 with err naming
 * the entry (analysis.tasks[1].shots). spec_from_json calls it. */
int spec_tasks_parse(json_t *tasks, struct job_spec *s, struct spec_error *err);
/* analysis.tasks as JSON: one object per task, every field explicit. */
json_t *spec_tasks_json(const struct job_spec *s);
/* A task's name, under which its metrics go (task/NAME/acc): its file's
 * base name up to the first '.'. */
void spec_task_name(const char *file, char *name, size_t cap);
/* Whether a layout name is one the evaluation reads (eval/layout.h). */
int spec_task_layout_known(const char *layout);
/* A name (an experiment's, a sweep's): letters, digits, '.', '_', '-', not
 * starting with '.' or '-'. 0, or -1 with *err naming field. */
int spec_check_name(const char *name, const char *field, struct spec_error *err);

/* Number of parameters of the model the spec describes, from spec/params.h's
 * tensors (the ones the trainer lays out); -1 while the vocab is unknown. */
int64_t spec_param_count(const struct job_spec *s);

#endif
