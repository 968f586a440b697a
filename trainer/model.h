/* The LLaMA model of PAPER.md §2 with every normalization variant, forward
 * and backward, written once against the ops table (kernels/ops.h).
 * Parameters live in one buffer, block after block, so that a block's
 * statistics are reductions over one range; their names are Hugging Face
 * LLaMA's. Block ℓ is 1-based everywhere, as in the paper's 1/√ℓ. */
#ifndef COD_MODEL_H
#define COD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops.h"
#include "trainer/variant.h"

struct model_config {
    int dim, n_layers, n_heads, ffn_dim, vocab;
    int seq_len;
    struct norm_variant norm;
    double rope_theta;   /* 10000 */
    double norm_eps;     /* 1e-6 */
};

enum param_kind {
    P_EMBED, P_Q, P_K, P_V, P_O, P_GATE, P_UP, P_DOWN,
    P_NORM_IN_ATTN, P_NORM_IN_FFN, P_NORM_OUT_ATTN, P_NORM_OUT_FFN,
    P_LAMBDA_ATTN, P_LAMBDA_FFN, P_FINAL_NORM, P_HEAD, P_KIND_COUNT
};

struct param_info {
    char name[96];
    enum param_kind kind;
    int layer;           /* 0: embedding; 1..L: blocks; L+1: final norm and head */
    int ndim;
    int64_t shape[2];
    size_t offset, n;
};

struct sub_acts;

struct model {
    const struct ops *ops;
    struct model_config cfg;
    struct block_cfg *blk;          /* [L], blk[l] is block l+1 */
    struct param_info *info;
    int n_tensors;
    size_t n_params;
    real *params, *grads;
    size_t *block_first, *block_end; /* parameter range of each block */
    real **w, **dw;                 /* [L+2][P_KIND_COUNT] pointers into params/grads */

    int max_B, B;                   /* allocated batch and the current one */
    int32_t *tokens, *targets;
    real **stream;                  /* [L+1] outputs: stream[0] the embedding, stream[l] block l */
    struct sub_acts *acts;          /* [2L] attention and MLP sub-layers */
    real *xf, *rstd_f, *logits, *losses;
    real *dstream[2];               /* gradients of the residual stream */
    real *scratch[8];               /* [N, max(d, ffn)] each, for the backward */
    void **allocs;                  /* every buffer, for model_destroy */
    int n_allocs;
    size_t bytes;                   /* asked of the backend, for out-of-memory reports */
    /* Layer pruning (trainer/prune.h): NULL, or [L] flags; skip[l-1] != 0
     * makes block l the identity in model_forward, while every other block
     * keeps its own block_cfg (its original ℓ). Forward only: the skipped
     * block's activations are stale, so model_backward asserts it is NULL. */
    const unsigned char *skip;
};

/* Sets up parameters and activations for micro-batches of up to max_B
 * sequences. 0, or -1 with err (out of memory names the bytes asked). */
int model_create(struct model *m, const struct ops *ops, const struct model_config *cfg, int max_B,
                 char *err, size_t errlen);
void model_destroy(struct model *m);

/* The init of the variant (PAPER.md §2, DESIGN.md §4) from a seed. */
int model_init_weights(struct model *m, uint64_t seed, char *err, size_t errlen);

/* Forward on B ≤ max_B sequences of seq_len tokens (host arrays). Returns
 * the sum of per-token losses over targets ≥ 0. With grad_scale != 0 it
 * prepares the backward of grad_scale · Σ loss. */
double model_forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                     real grad_scale);
/* Accumulates the gradients of the last forward into m->grads. */
void model_backward(struct model *m);

/* The tensor of the given kind in block l (1-based), or layer 0 / L+1. */
const struct param_info *model_param(const struct model *m, int layer, enum param_kind kind);
/* Training FLOPs per token: 6 per matmul weight (lm_head included, the
 * embedding lookup not) plus attention's 12·L·d·T (PaLM, appendix B). */
double model_flops_per_token(const struct model *m);

#endif
