/* The ops table: every numeric operation the transformer needs, forward and
 * backward. The model (trainer/model*.c) is written once against it; the CPU
 * backend (kernels/cpu/) is the reference and the CUDA backend must match it.
 *
 * Two element types. `real` (float; double in the gradient-check build) is
 * the master precision: parameters, gradients, Adam's moments, the norms'
 * 1/rms, the losses. `act` is a backend's own storage type for activations,
 * their gradients and the weights the matmuls read: real on the CPU, bf16 on
 * CUDA. An act buffer is opaque to the model: it offsets into one with
 * act_at() and moves data in and out with upload_act/download_act, which
 * convert. Where act is real (act_is_real), the weights the matmuls read are
 * the master weights themselves; otherwise they are a copy that to_act()
 * and adam() keep in step.
 *
 * Buffers are backend memory: the model never dereferences them. Shapes are
 * row-major; N = B·T rows. Outputs are overwritten unless a comment says
 * "+=": parameter gradients accumulate (micro-batches add into them). A
 * backend that can fault (a GPU) records the first fault and reports it
 * through error(); after a fault its results are meaningless and the
 * caller must stop. */
#ifndef COD_OPS_H
#define COD_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/real.h"

typedef struct act act; /* never defined: storage of a backend's activation type */

/* What adam() does beyond AdamW on the whole buffer in master precision. */
struct adam_extra {
    double grad_scale;      /* the gradient is grad_scale·g (1: g itself) */
    /* p, m and v are rounded to bf16 (to nearest, ties to even) after each
     * element's update, which is computed in real: the buffers then hold
     * only values bf16 can represent (train.precision "bf16") */
    int bf16;
    /* NULL, or the n_ranges ascending, disjoint [lo, hi) pairs of elements
     * updated: the others are neither read nor written (frozen gains);
     * ‖g‖ is over all n */
    const size_t *ranges;
    int n_ranges;
};
typedef struct recording recording; /* a backend's recorded sequence of ops */

struct ops {
    const char *name;
    size_t act_bytes; /* bytes per act element */
    int act_is_real;  /* act is this build's real: act and real buffers interchange */

    real *(*alloc)(size_t n); /* n elements, zeroed; NULL on failure */
    act *(*alloc_act)(size_t n);
    int32_t *(*alloc_i32)(size_t n);
    void (*free)(void *p);
    void (*zero)(real *p, size_t n);
    void (*zero_act)(act *p, size_t n);
    void (*copy)(real *dst, const real *src, size_t n);
    void (*copy_act)(act *dst, const act *src, size_t n);
    void (*upload)(real *dst, const real *host, size_t n);
    void (*download)(real *host, const real *src, size_t n);
    void (*upload_act)(act *dst, const real *host, size_t n); /* rounds to act */
    void (*download_act)(real *host, const act *src, size_t n);
    void (*upload_i32)(int32_t *dst, const int32_t *host, size_t n);
    /* the compute copy of master values, rounded to act */
    void (*to_act)(act *dst, const real *src, size_t n);

    /* 0, or -1 with err naming the first fault ("op: what"); sticky */
    int (*error)(char *err, size_t errlen);
    /* What the backend chose at run time that a run's log says once: which
     * attention the last attention op ran, and why (the CUDA backend has
     * cuDNN's and its own); NULL before any. A NULL entry: one attention. */
    const char *(*attention_choice)(void);

    /* Recording a sequence of ops once and replaying it (CUDA graphs: one
     * launch for a whole micro-batch instead of one per op); all four NULL
     * where the backend has no such thing. Between record_begin and
     * record_end the ops are recorded, not run, so nothing they would
     * compute exists yet, and no op that returns a value to the host may be
     * called. record_begin: 0, or -1 with err saying why not (nothing is
     * recording). record_end: the recording, or NULL with err when it could
     * not be made (then nothing ran and no fault was recorded: run the ops
     * as usual). replay runs it again on the buffers it was made with, as
     * they are then; every value an op took by value is replayed as it was,
     * so a recording is only for a sequence whose scalars and sizes do not
     * change. replay returns 0, or -1 when it can no longer run (memory of
     * the backend's own that it used has moved): free it and record again. */
    int (*record_begin)(char *err, size_t errlen);
    recording *(*record_end)(char *err, size_t errlen);
    int (*replay)(recording *r);
    void (*recording_free)(recording *r);

    /* Weight gradients beside the other ops (the CUDA backend's second
     * stream); all three NULL where a backend runs its ops in call order.
     * wgrad_beside: 1 when matmul_bwd's dw products run so: each starts
     * after the ops called before it, and the ops called after it may run
     * before it ends, until a join; the caller must then neither write
     * over a dw product's in or dout nor read or write its dw before a
     * join that covers it. wgrad_mark: a mark after the dw products called
     * so far; wgrad_join(mark): the ops called next start after those
     * products (-1: after every one). */
    int (*wgrad_beside)(void);
    long (*wgrad_mark)(void);
    void (*wgrad_join)(long mark);

    /* out[N,Out] = a·(in[N,In] · w[Out,In]ᵀ) + b·res[N,Out]; res NULL adds nothing */
    void (*matmul_fwd)(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                       const act *res, real b);
    /* dw[Out,In] += a·doutᵀ · in (skipped when dw is NULL), then
     * din[N,In] = a·(dout · w) + b·res (skipped when din is NULL; res may be
     * din itself or NULL); din may also be in, which dw has already read */
    void (*matmul_bwd)(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                       int In, int Out, real a, const act *res, real b);

    /* out[N,d] = table[tok[n]] */
    void (*embedding_fwd)(act *out, const int32_t *tok, const act *table, int N, int d);
    /* dtable[v] += Σ dout[n] over the rows n with tok[n] = v, in a fixed
     * order: pos[] lists the rows grouped by token (ascending rows within a
     * group), group k being pos[start[k]] … pos[start[k+1]−1]; n_groups
     * groups, start[] has n_groups+1 entries. A group may be empty
     * (start[k] = start[k+1]): it adds nothing, so that a caller can pass
     * the same n_groups for every batch of a size. */
    void (*embedding_bwd)(real *dtable, const act *dout, const int32_t *tok, const int32_t *pos,
                          const int32_t *start, int n_groups, int d);

    /* u = s_in·x; rstd[n] = 1/sqrt(mean(u²) + eps);
     * out = s_out·g ⊙ u·rstd + b·res (res NULL adds nothing) */
    void (*rmsnorm_fwd)(act *out, real *rstd, const act *x, const real *g, int N, int d,
                        real s_in, real s_out, real eps, const act *res, real b);
    /* dx = ∂/∂x of Σ dout ⊙ out + b·res (res NULL adds nothing);
     * dg += ∂/∂g of the same (dg NULL: not computed, the gain being frozen) */
    void (*rmsnorm_bwd)(act *dx, real *dg, const act *dout, const act *x, const real *g,
                        const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                        real b);

    /* Causal softmax attention with rotary embeddings. qkv rows are
     * [q | k | v], each nh·hd with head h at h·hd; row n is position n % T.
     * q and k are rotated on the way in (non-interleaved, rotate_half: the
     * pairs (i, i + hd/2) of each head by cos/sin [T, hd/2] of the
     * position), so qkv holds them as the projection made them and the
     * backward's dqkv is the gradient of those. out [N, nh·hd]. state
     * holds what the backward needs (the CUDA backend keeps q and k
     * rotated there), attn_state_size(B,T,nh,hd) elements. */
    size_t (*attn_state_size)(int B, int T, int nh, int hd);
    void (*attention_fwd)(act *out, real *state, const act *qkv, const real *cos,
                          const real *sin, int B, int T, int nh, int hd);
    /* dqkv, packed as qkv (the gradients of q and k before their rotation),
     * from dout and the forward's out, state and qkv */
    void (*attention_bwd)(act *dqkv, const act *dout, const act *out, real *state,
                          const act *qkv, const real *cos, const real *sin, int B, int T,
                          int nh, int hd);

    /* h[N,f] = silu(gate) ⊙ up, gu rows [gate | up] of 2f */
    void (*swiglu_fwd)(act *h, const act *gu, int N, int f);
    /* dgu [dgate | dup] from dh; h != NULL also gets the forward's h again
     * (h may be dh: each element of dh is read before h's is written) */
    void (*swiglu_bwd)(act *dgu, act *h, const act *dh, const act *gu, int N, int f);

    /* y[n, j] += bias[j] over N rows of d (the q, k and v biases of Qwen2) */
    void (*bias_add)(act *y, const real *bias, int N, int d);
    /* Grouped-query attention's K and V heads repeated for the query heads
     * they serve, as transformers' repeat_kv: in rows [q | k | v] with q of
     * nh heads and k, v of nkv each (nkv divides nh), out rows [q | k | v]
     * of nh heads each, head h of k and v being in's head h / (nh / nkv).
     * Forward only. */
    void (*repeat_kv)(act *out, const act *in, int N, int nh, int nkv, int hd);

    /* y = a·x + b·y (x may be y) */
    void (*axpby)(act *y, real a, const act *x, real b, size_t n);
    /* out[N,d] = lam ⊙ in, lam of length c ∈ {1, d} (SkipInit, LayerScale) */
    void (*chscale_fwd)(act *out, const act *in, const real *lam, int N, int d, int c);
    /* din = lam ⊙ dout; dlam += Σ dout ⊙ in */
    void (*chscale_bwd)(act *din, real *dlam, const act *dout, const act *in, const real *lam,
                        int N, int d, int c);

    /* Per row: loss[n] = logsumexp(logits[n]) − logits[n][tgt[n]] (0 where
     * tgt < 0). With grad_scale != 0 the logits are overwritten by
     * grad_scale·(softmax − onehot), the gradient of grad_scale·Σ loss (zero
     * rows where tgt < 0); with 0 they are left as they were. */
    void (*cross_entropy)(real *loss, act *logits, const int32_t *tgt, int N, int V,
                          real grad_scale);

    /* AdamW with bias correction and decoupled weight decay on n master
     * parameters, the gradient (g times x->grad_scale) scaled by
     * min(1, clip/‖g‖) when clip > 0; also writes the compute copy pact
     * unless act_is_real. x NULL: no adam_extra. Returns ‖g‖ before the
     * clip (NaN after a fault). */
    double (*adam)(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr,
                   real b1, real b2, real eps, real wd, long step, double clip,
                   const struct adam_extra *x);

    /* Reductions return double on the host, each in a fixed order. */
    double (*sum)(const real *x, size_t n);
    double (*sumsq)(const real *x, size_t n);
    double (*dist2)(const real *x, const real *y, size_t n); /* Σ (x − y)² */
    double (*act_sum)(const act *x, size_t n);
    double (*act_sumsq)(const act *x, size_t n);
    /* Σ over rows of arccos(cos(a_n, b_n))/π for [N,d] */
    double (*angular_sum)(const act *a, const act *b, int N, int d);
};

/* element i of an act buffer */
static inline act *act_at(const struct ops *o, act *p, size_t i)
{
    return (act *)((char *)p + i * o->act_bytes);
}

static inline const act *act_at_c(const struct ops *o, const act *p, size_t i)
{
    return (const act *)((const char *)p + i * o->act_bytes);
}

extern const struct ops ops_cpu;

#endif
