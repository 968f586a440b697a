/* A model's parameter tensors: see params.h. */
#include "spec/params.h"

#include "spec/spec.h"

static void put(struct param_tensor *t, enum param_kind kind, const char *name, int ndim,
                int64_t rows, int64_t cols, int fused, int ffn_axis)
{
    *t = (struct param_tensor){.kind = kind, .name = name, .ndim = ndim, .rows = rows,
                               .cols = ndim == 2 ? cols : 1, .fused = fused,
                               .ffn_axis = ffn_axis};
}

int params_block(const struct param_dims *d, const struct norm_variant *v,
                 struct param_tensor out[PARAMS_BLOCK_MAX])
{
    int64_t m = d->dim, f = d->ffn_dim, qd = d->q_dim, kvd = d->kv_dim;
    int n = 0;
    put(&out[n++], P_Q, "self_attn.q_proj.weight", 2, qd, m, 0, 0);
    put(&out[n++], P_K, "self_attn.k_proj.weight", 2, kvd, m, 1, 0);
    put(&out[n++], P_V, "self_attn.v_proj.weight", 2, kvd, m, 1, 0);
    if (d->qkv_bias) {
        put(&out[n++], P_Q_BIAS, "self_attn.q_proj.bias", 1, qd, 1, 0, 0);
        put(&out[n++], P_K_BIAS, "self_attn.k_proj.bias", 1, kvd, 1, 1, 0);
        put(&out[n++], P_V_BIAS, "self_attn.v_proj.bias", 1, kvd, 1, 1, 0);
    }
    put(&out[n++], P_O, "self_attn.o_proj.weight", 2, m, qd, 0, 0);
    put(&out[n++], P_GATE, "mlp.gate_proj.weight", 2, f, m, 0, 1);
    put(&out[n++], P_UP, "mlp.up_proj.weight", 2, f, m, 1, 1);
    put(&out[n++], P_DOWN, "mlp.down_proj.weight", 2, m, f, 0, 2);
    if (v->placement == PLACE_SANDWICH) {
        /* Gemma 2's names for the four norms of a sandwich block */
        put(&out[n++], P_NORM_IN_ATTN, "input_layernorm.weight", 1, m, 1, 0, 0);
        put(&out[n++], P_NORM_OUT_ATTN, "post_attention_layernorm.weight", 1, m, 1, 0, 0);
        put(&out[n++], P_NORM_IN_FFN, "pre_feedforward_layernorm.weight", 1, m, 1, 0, 0);
        put(&out[n++], P_NORM_OUT_FFN, "post_feedforward_layernorm.weight", 1, m, 1, 0, 0);
    } else {
        put(&out[n++], P_NORM_IN_ATTN, "input_layernorm.weight", 1, m, 1, 0, 0);
        put(&out[n++], P_NORM_IN_FFN, "post_attention_layernorm.weight", 1, m, 1, 0, 0);
    }
    if (v->residual == RES_LAYERSCALE) {
        put(&out[n++], P_LAMBDA_ATTN, "self_attn.layer_scale", 1, m, 1, 0, 0);
        put(&out[n++], P_LAMBDA_FFN, "mlp.layer_scale", 1, m, 1, 0, 0);
    } else if (v->residual == RES_SKIPINIT) {
        put(&out[n++], P_LAMBDA_ATTN, "self_attn.skip_alpha", 1, 1, 1, 0, 0);
        put(&out[n++], P_LAMBDA_FFN, "mlp.skip_alpha", 1, 1, 1, 0, 0);
    }
    return n;
}

int params_outer(const struct param_dims *d, int after_blocks,
                 struct param_tensor out[PARAMS_OUTER_MAX])
{
    if (!after_blocks) {
        put(&out[0], P_EMBED, "model.embed_tokens.weight", 2, d->vocab, d->dim, 0, 0);
        return 1;
    }
    put(&out[0], P_FINAL_NORM, "model.norm.weight", 1, d->dim, 1, 0, 0);
    if (d->tied_embeddings)
        return 1;
    put(&out[1], P_HEAD, "lm_head.weight", 2, d->vocab, d->dim, 0, 0);
    return 2;
}

static int64_t elements(const struct param_tensor *t, int n)
{
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i].rows * t[i].cols;
    return sum;
}

int64_t params_count(const struct param_dims *d, const struct norm_variant *v, int n_layers)
{
    struct param_tensor t[PARAMS_BLOCK_MAX];
    int64_t sum = elements(t, params_outer(d, 0, t)) + elements(t, params_outer(d, 1, t));
    return sum + n_layers * elements(t, params_block(d, v, t));
}

struct param_dims params_dims_of_spec(const struct job_spec *s)
{
    const struct model_shape *m = &s->model;
    return (struct param_dims){.vocab = m->vocab, .dim = m->dim, .ffn_dim = m->ffn_dim,
                               .q_dim = m->dim, .kv_dim = m->dim};
}
