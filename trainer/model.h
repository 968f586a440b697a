/* The LLaMA model (RMSNorm, RoPE, SwiGLU, untied lm_head, no biases) with
 * every normalization variant of spec/variant.h, forward and backward,
 * written once against the ops table (kernels/ops.h). Parameters live in one buffer, block after block, so that
 * a block's statistics are reductions over one range; their names are
 * Hugging Face LLaMA's. Block ℓ is 1-based everywhere, as in the paper's
 * 1/√ℓ.
 *
 * The buffer is laid out for the matmuls: every tensor starts on a
 * PARAM_ALIGN boundary; q, k and v follow each other so that they are one
 * [3d, d] weight, and so are gate and up ([2f', d]); f' is the FFN width
 * rounded up to a multiple of 8 (16 bytes of bf16), with zero rows and
 * columns in the padding, which stay zero under training. A tensor's
 * elements are therefore found through its ld (elements between rows) and
 * not always contiguously: param_index(). */
#ifndef COD_MODEL_H
#define COD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops.h"
#include "spec/params.h"
#include "trainer/block.h"

struct model_config {
    int dim, n_layers, n_heads, ffn_dim, vocab;
    int seq_len;
    struct norm_variant norm;
    double rope_theta;   /* 10000 */
    double norm_eps;     /* 1e-6 */
    /* Pretrained models' shapes (trainer/hf_config.h); zero is cod's own
     * model. Grouped-query attention and the biases are forward only. */
    int n_kv_heads;      /* 0: n_heads; fewer: grouped-query attention */
    int head_dim;        /* 0: dim / n_heads */
    int qkv_bias;        /* q, k and v projections with biases (Qwen2) */
    int tied_embeddings; /* the lm_head is the embedding table */
    /* NULL: θ^(−2i/head_dim); else head_dim/2 inverse frequencies (Llama 3's
     * scaled RoPE), read by model_create only */
    const double *rope_freq;
    /* No gradients and no backward (analyses): the sub-layers share one set
     * of activations, only the residual stream is kept per layer, and where
     * act is not real the master weights are not kept either: only the
     * matmuls' act copy, and the vectors (norm gains, biases) as real. */
    int forward_only;
    double embed_std;    /* the embedding's init: N(0, embed_std) */
    int bf16;            /* weights held in bf16 (train.precision "bf16"): the init is rounded */
};

enum { PARAM_ALIGN = 64 }; /* elements: 256 bytes of fp32 */

struct param_info {
    char name[96];
    enum param_kind kind;
    int layer;           /* 0: embedding; 1..L: blocks; L+1: final norm and head */
    int ndim;
    int64_t shape[2];
    size_t offset, n;    /* n = shape[0]·shape[1], the tensor's own elements */
    size_t ld;           /* elements between rows in the buffer (shape[1] unless padded) */
    size_t span;         /* elements it occupies in the buffer, padding included */
};

/* buffer index of element i (row-major over shape) of tensor p */
static inline size_t param_index(const struct param_info *p, size_t i)
{
    size_t cols = (size_t)p->shape[1];
    return p->offset + (i / cols) * p->ld + i % cols;
}

struct sub_acts;

/* What the model spends on speed beyond what its backward needs, and why
 * (model_memory.c, which says the rules and their settings). */
struct model_memory {
    int beside;      /* the weight gradients beside the other ops: the backward's scratch doubled */
    int logit_rows;  /* rows of logits at a time */
    int keep_swiglu; /* SwiGLU's output kept for the backward, not written again by it */
    size_t extra;    /* bytes beyond the 128 MiB of logits and the single scratch */
    char said[240];  /* the choice in words, for the run's log */
};
/* what the choice is made from: the sizes, and the bytes of each extra */
struct model_memory_need {
    int N, V, forward_only, beside;
    size_t act_bytes;    /* of one act element */
    size_t activations;  /* the bytes the sub-layers' activations take */
    size_t beside_bytes; /* the second scratch, where beside */
    size_t swiglu_bytes; /* SwiGLU's output of every layer */
};
/* 0, or -1 with err naming a setting that does not read */
int model_memory_plan(const struct model_memory_need *need, struct model_memory *p, char *err,
                      size_t errlen);

struct model {
    const struct ops *ops;
    struct model_config cfg;
    int ffn_pad;                    /* f': the FFN width the matmuls use */
    struct block_cfg *blk;          /* [L+1], blk[l] is block l+1; blk[L] the final norm
                                       and the lm_head (block.h) */
    struct param_info *info;
    int n_tensors;
    size_t n_params;                /* elements of the parameter buffer, padding included */
    size_t n_weights;               /* the model's parameters: Σ info[t].n */
    real *params, *grads;           /* master weights and their gradients */
    act *wact;                      /* the weights the matmuls read: params itself where act
                                       is real, else a copy kept by model_sync_weights and adam */
    size_t *block_first, *block_end; /* parameter range of each block */
    size_t *woff;                   /* [L+2][P_KIND_COUNT] buffer offsets, (size_t)-1 if absent */
    size_t *roff;                   /* the same into params: woff itself unless params holds
                                       the vectors alone (forward_only where act is not real) */
    size_t n_real;                  /* elements of params */
    int n_kv, hd;                   /* key/value heads and the head size in use */
    /* the parameters that learn, as ascending [lo, hi) pairs of the buffer
     * (ops.h's adam_extra): NULL when all do; without the norms' gains when
     * they are frozen (block_cfg's frozen_gains), which then get no
     * gradient either */
    size_t *learn_ranges;
    int n_learn_ranges;

    int max_B, B;                   /* allocated batch and the current one */
    int T;                          /* tokens a row of the current batch: cfg.seq_len, or
                                       fewer in model_trunk's */
    int32_t *tokens, *targets;
    int32_t *emb_pos, *emb_start;   /* rows grouped by token, for embedding_bwd */
    int32_t *h_pos, *h_start, *h_count; /* their host side; h_count [vocab + 1] */
    int emb_groups;
    act **stream;                   /* [L+1] outputs: stream[0] the embedding, stream[l] block l */
    struct sub_acts *acts;          /* [2L] attention and MLP sub-layers */
    act *xf, *dxf, *logits;         /* logits: logit_rows rows at a time; xf and dxf
                                       share memory with other buffers (model.c) */
    real *rstd_f, *losses;
    int logit_rows;
    /* the per-token losses of the micro-batches model_step ran since
     * model_losses_take: loss_n rows of loss_cap (backend memory), and
     * loss_host, what was summed on the host where that memory ran out */
    real *loss_rows;
    size_t loss_n, loss_cap;
    double loss_host;
    real *rope_cos, *rope_sin;      /* [T, hd/2] */
    act *dstream[3];                /* gradients of the residual stream (the third where
                                       the weight gradients run beside) */
    act *norm_tmp, *h_tmp;          /* a sub-layer's input gradient before its norm's backward
                                       [N,d]; SwiGLU's output [N,f'], written by the forward
                                       and again by the backward (unless mem.keep_swiglu) */
    act *d_wide, *d_mid;            /* backward scratch: [N, max(3d, 2f')], [N, max(d, f')] */
    act *tmp[3];                    /* [N,d] each, for the less common variants' extra steps */
    /* where the weight gradients run beside: the scratch above a second
     * time, which the backward swaps with it at each sub-layer */
    struct {
        act *d_wide, *d_mid, *tmp[3];
    } alt;
    struct model_memory mem;
    void **allocs;                  /* every buffer, for model_destroy */
    int n_allocs;
    size_t bytes;                   /* asked of the backend, for out-of-memory reports */
    /* NULL, or told as the backward completes the gradients of a range of
     * the parameter buffer [lo, hi): the lm_head's and final norm's first,
     * then each block's from the last, the embedding's last; a
     * data-parallel trainer starts summing them while the backward goes on */
    void (*grads_ready)(void *ctx, size_t lo, size_t hi);
    void *grads_ctx;
    /* Layer pruning (trainer/prune.h): NULL, or [L] flags; skip[l-1] != 0
     * makes block l the identity in model_forward, while every other block
     * keeps its own block_cfg (its original ℓ). Forward only: the skipped
     * block's activations are stale, so model_backward asserts it is NULL. */
    const unsigned char *skip;
    /* model_step's recording of a micro-batch (ops.h), for batches of B
     * sequences at loss scale `scale`; off once the backend declined, why
     * says why; replays counts the micro-batches run from it. */
    struct {
        recording *r;
        int B, off;
        real scale;
        long replays;
        char why[256];
    } rec;
};

/* Sets up parameters and activations for micro-batches of up to max_B
 * sequences. 0, or -1 with err (out of memory names the bytes asked; a
 * shape only the forward computes, without forward_only). */
int model_create(struct model *m, const struct ops *ops, const struct model_config *cfg, int max_B,
                 char *err, size_t errlen);
void model_destroy(struct model *m);

/* The init of the variant (spec/variant.h) from a seed, rounded to bf16 when cfg.bf16. */
int model_init_weights(struct model *m, uint64_t seed, char *err, size_t errlen);
/* After m->params changed other than by the ops' adam (an upload, a
 * checkpoint): brings the matmuls' copy of the weights in step. */
void model_sync_weights(struct model *m);

/* Forward on B ≤ max_B sequences of seq_len tokens (host arrays). Returns
 * the sum of per-token losses over targets ≥ 0. With grad_scale != 0 it
 * starts the backward of grad_scale · Σ loss: the lm_head's gradient is
 * accumulated here, a chunk of rows at a time, so that the logits of the
 * whole batch never exist at once; model_backward must follow. */
double model_forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                     real grad_scale);
/* The forward's logits, [B·seq_len, vocab] into a host array. */
void model_logits(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                  real *logits);
/* Evaluation's forward, which needs the log-probabilities of a few tokens
 * of rows of any length rather than a loss over every position: B rows of
 * T tokens (T ≤ cfg.seq_len, B·T ≤ max_B·cfg.seq_len: shorter rows, more
 * of them), up to the final norm, computing no logits. A row's positions
 * see only those before them, so a row padded at its end scores its own
 * tokens as it would alone. Not to be followed by model_backward. */
void model_trunk(struct model *m, const int32_t *tokens, int B, int T);
/* After model_trunk: the blocks after block l again, on the stream that
 * entered block l, which is the model without block l (layer pruning:
 * what precedes block l is the same with or without it, so it is not
 * computed again, about half of the L full forwards in all). It writes
 * the stream after block l, so after one model_trunk it is called for
 * l = L, L−1, …, 1 in that order; model_score then reads the model
 * without block l. */
void model_trunk_without(struct model *m, int l);
/* After model_trunk(_without): the summed loss over the batch's targets
 * (≥ 0), as model_forward's. */
double model_trunk_loss(struct model *m, const int32_t *targets);
/* After model_trunk(_without): log p(target[i] | the row's tokens up to
 * pos[i]), for n (position, token) pairs, pos[i] = b·T + t a position of
 * the batch (several pairs may name one position), into the host array
 * logprob [n]. */
void model_score(struct model *m, const int32_t *pos, const int32_t *target, int n,
                 real *logprob);
/* Accumulates the gradients of the last forward into m->grads. */
void model_backward(struct model *m);
/* model_forward with grad_scale != 0, then model_backward: one training
 * micro-batch, its gradients accumulated into m->grads, its per-token
 * losses kept for model_losses_take. Nothing comes back to the host, so on
 * a GPU the host loads the next micro-batch while this one runs. Where the
 * backend records (CUDA graphs) and neither grads_ready nor skip is set,
 * micro-batches of one shape after the first two are one replay of a
 * recording (m->rec) instead of a launch per op; the numbers are the same
 * either way. */
void model_step(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                real grad_scale);
/* The summed loss of the micro-batches since the last call (one reduction
 * in a fixed order, and one wait for the device); 0 after none. */
double model_losses_take(struct model *m);

/* The tensor of the given kind in block l (1-based), or layer 0 / L+1. */
const struct param_info *model_param(const struct model *m, int layer, enum param_kind kind);
/* Training FLOPs per token: 6 per matmul weight (lm_head included, the
 * embedding lookup not) plus attention's 12·L·d·T (PaLM, appendix B). */
double model_flops_per_token(const struct model *m);

/* Copies tensor p between a host image of the parameter buffer and a
 * contiguous [shape] array (its checkpoint layout). */
void param_pack(const struct param_info *p, const real *image, real *dst);
void param_unpack(const struct param_info *p, const real *src, real *image);

#endif
