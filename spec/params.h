/* The parameter tensors of a model, by kind and shape, in the order the
 * trainer lays them out (trainer/model.h). Which tensors a block has
 * follows from the norm variant: a sandwich block's four norms,
 * LayerScale's and SkipInit's branch scales. The spec's parameter count
 * (spec_param_count) and the model's layout both read this list, so the
 * size a server checks is the size a worker builds. Names are Hugging Face
 * LLaMA's. */
#ifndef COD_SPEC_PARAMS_H
#define COD_SPEC_PARAMS_H

#include <stdint.h>

#include "spec/variant.h"

enum param_kind {
    P_EMBED, P_Q, P_K, P_V, P_O, P_GATE, P_UP, P_DOWN,
    P_NORM_IN_ATTN, P_NORM_IN_FFN, P_NORM_OUT_ATTN, P_NORM_OUT_FFN,
    P_LAMBDA_ATTN, P_LAMBDA_FFN, P_FINAL_NORM, P_HEAD, P_Q_BIAS, P_K_BIAS, P_V_BIAS,
    P_KIND_COUNT
};

/* The sizes a model's tensors are made of. */
struct param_dims {
    int64_t vocab, dim, ffn_dim;
    int64_t q_dim, kv_dim;     /* heads × head size of the queries; of the keys and values */
    int qkv_bias;              /* q, k and v projections with biases (Qwen2) */
    int tied_embeddings;       /* no lm_head of its own */
};

struct param_tensor {
    enum param_kind kind;
    const char *name;          /* a block's after "model.layers.N.", else the whole name */
    int ndim;
    int64_t rows, cols;        /* cols is 1 for a vector */
    int fused;                 /* continues the tensor before it as one matmul weight (k and v
                                  after q, up after gate) or one bias */
    int ffn_axis;              /* the axis that is the FFN width: 1 rows, 2 columns, 0 none */
};

struct job_spec;
/* A spec's model, cod's own: no grouped-query attention, no biases, an
 * untied lm_head. */
struct param_dims params_dims_of_spec(const struct job_spec *s);

enum { PARAMS_BLOCK_MAX = 16, PARAMS_OUTER_MAX = 2 };

/* The tensors of one block under variant v, in layout order; their count. */
int params_block(const struct param_dims *d, const struct norm_variant *v,
                 struct param_tensor out[PARAMS_BLOCK_MAX]);
/* The tensors before the blocks (the embedding) or after them (the final
 * norm, and the lm_head unless tied); their count. */
int params_outer(const struct param_dims *d, int after_blocks,
                 struct param_tensor out[PARAMS_OUTER_MAX]);
/* The elements of every tensor of an n_layers model. */
int64_t params_count(const struct param_dims *d, const struct norm_variant *v, int n_layers);

#endif
