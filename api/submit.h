/* Turning submissions into queue rows: a spec is validated by the parser
 * the trainer uses (spec/spec.h) and its data checked without reading a
 * token (spec/data.h: the files exist and are shards; the vocabulary from
 * meta.json when there is one, else the worker finds it), so nothing the
 * trainer would refuse for its form is queued; a sweep's grid is expanded
 * and every cell checked before any is written. */
#ifndef COD_SUBMIT_H
#define COD_SUBMIT_H

#include <jansson.h>

#include "schema/store.h"
#include "spec/data_roots.h"
#include "spec/spec.h"

/* A validated spec with the strings a queue row points into. */
/* What a server allows a submission (its settings). */
struct submit_rules {
    int max_gang;              /* GPUs of one experiment, at most (--max-gang) */
    int max_cells, max_axes;   /* a sweep's cells and grid keys (--max-sweep, --max-sweep-axes) */
    double max_model_gib;      /* a model's memory at its batch (--max-model-gib) */
    struct data_roots roots;   /* where its data may lie (--data-root, --max-data-files) */
};

struct submission {
    struct job_spec spec;
    char *spec_json;      /* complete spec, every default explicit (owned) */
    char *cell_json;      /* a sweep cell's grid values, or NULL (owned) */
    char model[48];       /* the model column: a preset's name, or one after the shape */
    int64_t after[SPEC_MAX_AFTER + 1]; /* what it waits for (row.after) */
    struct new_experiment row;
};

/* 0, or -1 with *err naming the field: a spec asking for more GPUs, more
 * memory or other data than the rules allow is refused. */
int submission_from_json(json_t *spec, const struct submit_rules *rules, struct submission *s,
                         struct spec_error *err);
void submission_free(struct submission *s);

/* Expands {"base", "grid", "name"?, "then"?} into *n checked submissions
 * (caller frees with submissions_free), in time linear in the body (each
 * grid key is checked as it is read), every cell followed by its later
 * stages (then: a spec, or a list of them, each started from the stage
 * before's final checkpoint). -1 with *err naming the field. */
int sweep_expand(json_t *body, const struct submit_rules *rules, struct submission **out, int *n,
                 struct spec_error *err);
void submissions_free(struct submission *s, int n);

#endif
