/* What the recording checks (tests/unit/test_recording.c on the CPU,
 * tests/gpu/test_model_cuda.c's `recorded` on a GPU) do to their two copies
 * of a model each step: zero the gradients, one micro-batch through
 * model_step, one AdamW update; the summed losses and the gradient norms
 * come back, the first copy's first. */
#ifndef COD_TESTS_TWIN_UPDATE_H
#define COD_TESTS_TWIN_UPDATE_H

#include "trainer/model.h"

static inline void twin_update(struct model *const m[2], real *const adam_m[2],
                               real *const adam_v[2], const int32_t *tok, const int32_t *tgt,
                               int B, real lr, long step, double loss[2], double norm[2])
{
    for (int i = 0; i < 2; i++) {
        const struct ops *o = m[i]->ops;
        o->zero(m[i]->grads, m[i]->n_params);
        model_step(m[i], tok, tgt, B, (real)(1.0 / (B * m[i]->cfg.seq_len)));
        loss[i] = model_losses_take(m[i]);
        norm[i] = o->adam(m[i]->params, m[i]->wact, m[i]->grads, adam_m[i], adam_v[i],
                          m[i]->n_params, lr, 0.9f, 0.95f, 1e-8f, 0.1f, step, 1.0, NULL);
    }
}

#endif
