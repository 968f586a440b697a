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
};

/* mixed: fp32 master weights and Adam moments; bf16: the weights and both
 * moments held in bf16 between updates, as the paper's trainer does */
enum precision { PRECISION_MIXED, PRECISION_BF16 };
/* stream: documents packed end to end into rows; documents: one document a
 * row from its doc token, truncated or right-padded, pads not counted */
enum packing { PACKING_STREAM, PACKING_DOCUMENTS };

struct train_cfg {
    long steps;
    int seq_len, batch_seqs, micro_batch;
    double lr;
    long warmup;
    double min_lr_ratio, beta1, beta2, eps, weight_decay, clip;
    uint64_t seed;
    enum precision precision;
};

struct job_spec {
    char name[128];
    struct model_shape model;
    struct norm_variant norm;
    char train_glob[1024], val_glob[1024];
    enum packing packing;
    struct train_cfg train;
    long eval_every, eval_tokens;
    long eval_train_tokens; /* training targets evaluated beside them (0: none) */
    long stats_every;
    long checkpoint_every;  /* steps between checkpoints (0: only at the end and on stop) */
    int checkpoint_keep;    /* newest checkpoints kept on disk */
    int analysis_angular, analysis_prune;
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

/* The names of the string values of train.precision and data.packing. */
const char *spec_precision_name(enum precision p);
const char *spec_packing_name(enum packing p);

/* A complete spec written before train.precision, data.packing,
 * model.embed_std and norm.gains existed (a checkpoint's state.json of
 * that time) says what it ran once they are written in with the values of
 * that time: mixed precision, stream packing, learned gains, the embedding
 * from N(0, √0.4). Only what is missing goes in, and only into sections
 * that are objects (schema/recipe_fields.sql does the same to the server's
 * stored specs). 0, or -1 when out of memory. */
int spec_upgrade(json_t *spec);

/* Number of parameters of the model the spec describes (vocab must be known). */
int64_t spec_param_count(const struct job_spec *s);

#endif
