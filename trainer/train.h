/* The training loop shared by cod-train and cod-worker: Adam over
 * gradient-accumulated batches on the recipe's schedule, evaluation and
 * per-layer statistics on their cadences, checkpoints, exact resume, and a
 * clean stop. It knows nothing of servers: what it measures goes to
 * RUN/metrics.jsonl and to the caller's hooks. */
#ifndef COD_TRAIN_H
#define COD_TRAIN_H

#include <stddef.h>

#include <stdint.h>

#include "kernels/comm.h"
#include "kernels/ops.h"
#include "spec/spec.h"
#include "trainer/model.h"

/* What a hook at the end of a run records through: metric points as the
 * run's own (RUN/metrics.jsonl and the metric hook), lines of its log. */
struct train_emit {
    void *run;
    void (*point)(void *run, long step, const char *name, int layer, double value);
    void (*say)(void *run, const char *line);
};

struct train_hooks {
    void *ctx;
    /* every metric point; layer < 0 for scalars; a non-finite value is a divergence */
    void (*metric)(void *ctx, long step, const char *name, int layer, double value);
    /* progress lines and events, without a trailing newline */
    void (*log)(void *ctx, const char *line);
    /* polled after every update: TRAIN_STOP_CHECKPOINT checkpoints and stops;
     * TRAIN_STOP_ABANDON stops without writing (the run's directory may now
     * belong to someone else, e.g. a worker whose lease was lost) */
    int (*should_stop)(void *ctx);
    /* NULL, or after the end-of-job analyses, on rank 0, with the trained
     * model: the caller's own (analysis.tasks' evaluation, which needs a
     * tokenizer, which the trainer knows nothing of). 0, or -1 with err:
     * the run fails. */
    int (*analyses)(void *ctx, struct model *m, long step, const struct train_emit *e, char *err,
                    size_t errlen);
};

struct train_opts {
    const struct ops *ops;
    /* NULL for one rank; a gang's communicator: every rank runs train_run
     * with the same spec on its share of each batch (batch_seqs must split
     * into world × micro_batch); rank 0 alone writes checkpoints and
     * metrics, and decides a resume, which the others take from it */
    struct comm *comm;
    int resume;                 /* continue from the newest checkpoint under out_dir */
    double progress_seconds;    /* cadence of progress lines (0: every update) */
    /* A start that is not the seed's (init.from): the weights of a cod
     * checkpoint (init_hf 0) or of a Hugging Face folder, read before the
     * first update of a run that does not resume; the optimizer starts
     * fresh. NULL: the seed's init. */
    const char *init_from;
    int init_hf;
    /* Instruction data: the row sets (common/rowset.h) that stand for
     * data.train and data.val (val_rows NULL: none held out), pad the input
     * id of a padded position. NULL: the spec's token shards. */
    const char *train_rows, *val_rows;
    uint32_t pad;
};

enum { TRAIN_DONE = 0, TRAIN_STOPPED = 1, TRAIN_FAILED = -1, TRAIN_FAULT = -2 };
enum { TRAIN_GO_ON = 0, TRAIN_STOP_CHECKPOINT = 1, TRAIN_STOP_ABANDON = 2 };

/* The sample index of sequence i of `rank`'s share of update `step`: rank
 * r takes sequences [r·B/W, (r+1)·B/W) of the global batch of B, so W
 * ranks together read exactly what one rank would. */
int64_t train_sample_index(const struct job_spec *s, long step, int rank, int world, int i);

/* The model a spec describes (its vocabulary known). */
struct model_config train_model_config(const struct job_spec *s);

/* Runs the spec (validated, with its data checked) into out_dir. Returns
 * TRAIN_DONE, TRAIN_STOPPED (checkpoint written), TRAIN_FAILED with err (a
 * bad checkpoint, out of memory, "diverged at step N"), or TRAIN_FAULT with
 * err: the machine failed (a device fault, the gang's communication, its
 * disk refusing a checkpoint or metrics.jsonl), not the experiment, so
 * another attempt may succeed. */
int train_run(const struct job_spec *spec, const char *out_dir, const struct train_opts *opts,
              const struct train_hooks *hooks, char *err, size_t errlen);

#endif
