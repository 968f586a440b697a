/* A model's size from its spec: see footprint.h. The activations counted
 * are those the trainer keeps for the backward (trainer/model.c): per
 * token and block the residual stream, the attention's input, q, k, v and
 * output, the MLP's input, its gate and up projections and its output;
 * what it shares between blocks and the logits are left out, so the bound
 * stays below what it allocates. */
#include "spec/footprint.h"

void spec_footprint(const struct job_spec *s, struct footprint *out)
{
    const struct model_shape *m = &s->model;
    double V = m->vocab > 0 ? m->vocab : 2, d = m->dim, f = m->ffn_dim, L = m->n_layers;
    out->params = 2 * V * d + L * (4 * d * d + 3 * d * f + 2 * d) + d;
    double state = s->train.precision == PRECISION_BF16 ? 10 : 16;
    double tokens = (double)s->train.micro_batch * s->train.seq_len;
    out->bytes = out->params * state + L * tokens * (9 * d + 2 * f) * 2;
}
