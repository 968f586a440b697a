/* Checkpoints: RUN/checkpoints/step_NNNNNNNN/ holding model.safetensors
 * (Hugging Face LLaMA names, plus the variant's own tensors), optim.safetensors
 * (Adam's exp_avg and exp_avg_sq per tensor) and state.json (step, data
 * cursor, seed, the full spec, whether it is the run's final one). A checkpoint is built in a .tmp directory,
 * every file fsynced, then renamed into place: a directory without .tmp is
 * always complete. */
#ifndef COD_CHECKPOINT_H
#define COD_CHECKPOINT_H

#include <stddef.h>

#include <jansson.h>

#include "spec/spec.h"
#include "trainer/model.h"

struct train_state {
    long step;              /* optimizer updates done */
    long long samples;      /* training sequences consumed (the data cursor) */
    long long tokens;       /* the targets trained on, pads not counted; -1 when a
                               checkpoint does not say (written before cod counted them) */
    unsigned long long seed;
    int final;              /* the run's last step: 1, 0, or -1 when a checkpoint
                               does not say (written before cod said it) */
};

/* Writes a checkpoint of the model and Adam moments (backend buffers of
 * m->n_params each) and keeps the newest `keep`. One that cannot be written
 * (a full disk) leaves nothing of itself and the older ones as they were;
 * err names the file and the operation that failed and the checkpoint a
 * resume starts from. */
int checkpoint_save(const char *run_dir, const struct model *m, const real *adam_m,
                    const real *adam_v, const struct train_state *st, json_t *spec, int keep,
                    char *err, size_t errlen);
/* The newest complete checkpoint directory: 1 and its path, 0 if none, -1 on error. */
int checkpoint_latest(const char *run_dir, char *path, size_t pathlen, char *err, size_t errlen);
/* Reads a checkpoint's state.json: its train state and its spec (caller
 * decrefs); -1 with err naming the file if it is not a cod checkpoint. */
int checkpoint_read_state(const char *ckpt_dir, struct train_state *st, json_t **spec_out,
                          char *err, size_t errlen);
/* A checkpoint's spec, parsed (a spec of an older cod upgraded to what it
 * ran), with the model it trained known to the vocabulary; -1 with err
 * naming state.json otherwise. st may be NULL. */
int checkpoint_read_spec(const char *ckpt_dir, struct train_state *st, struct job_spec *s,
                         char *err, size_t errlen);
/* Loads a checkpoint into a model created with the same shape. spec_out, if
 * not NULL, receives the checkpoint's spec (caller decrefs). */
int checkpoint_load(const char *ckpt_dir, struct model *m, real *adam_m, real *adam_v,
                    struct train_state *st, json_t **spec_out, char *err, size_t errlen);
/* Loads only the weights (analyses and export). */
int checkpoint_load_weights(const char *ckpt_dir, struct model *m, char *err, size_t errlen);

#endif
