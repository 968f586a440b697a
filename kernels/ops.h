/* The ops table: every numeric operation the transformer needs, forward and
 * backward. The model (trainer/model.c) is written once against it; the CPU
 * backend (kernels/cpu/) is the reference and the CUDA backend must match it.
 * Buffers are backend memory: the model never dereferences them, it moves
 * data in and out with upload/download. Shapes are row-major; N = B·T rows.
 * Functions named *_bwd accumulate (+=) into parameter gradients; into input
 * gradients they accumulate too, so callers zero what must start at zero. */
#ifndef COD_OPS_H
#define COD_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/real.h"

struct ops {
    const char *name;

    real *(*alloc)(size_t n);                 /* n elements, zeroed; NULL on failure */
    int32_t *(*alloc_i32)(size_t n);
    void (*free)(void *p);
    void (*zero)(real *p, size_t n);
    void (*copy)(real *dst, const real *src, size_t n);
    void (*upload)(real *dst, const real *host, size_t n);
    void (*download)(real *host, const real *src, size_t n);
    void (*upload_i32)(int32_t *dst, const int32_t *host, size_t n);

    /* out[N,Out] = in[N,In] · w[Out,In]ᵀ */
    void (*matmul_fwd)(real *out, const real *in, const real *w, int N, int In, int Out);
    /* din[N,In] += dout · w (skipped when din is NULL); dw[Out,In] += doutᵀ · in */
    void (*matmul_bwd)(real *din, real *dw, const real *dout, const real *in, const real *w,
                       int N, int In, int Out);

    /* out[N,d] = table[tok[n]] */
    void (*embedding_fwd)(real *out, const int32_t *tok, const real *table, int N, int d);
    void (*embedding_bwd)(real *dtable, const real *dout, const int32_t *tok, int N, int d);

    /* out = s · g ⊙ x / sqrt(mean(x²) + eps), rstd[N] kept for the backward */
    void (*rmsnorm_fwd)(real *out, real *rstd, const real *x, const real *g, int N, int d,
                        real s, real eps);
    void (*rmsnorm_bwd)(real *dx, real *dg, const real *dout, const real *x, const real *g,
                        const real *rstd, int N, int d, real s);

    /* Rotary embedding, non-interleaved (rotate_half), on [B,T,nh,hd].
     * dir = +1 rotates forward; dir = -1 is the transpose, i.e. its backward. */
    void (*rope)(real *out, const real *in, int B, int T, int nh, int hd, real theta, int dir);

    /* Causal softmax attention on [B,T,nh,hd]; state holds what the backward
     * needs, attn_state_size(B,T,nh) elements. */
    size_t (*attn_state_size)(int B, int T, int nh);
    void (*attention_fwd)(real *out, real *state, const real *q, const real *k, const real *v,
                          int B, int T, int nh, int hd);
    /* dq, dk, dv are overwritten */
    void (*attention_bwd)(real *dq, real *dk, real *dv, const real *dout, const real *state,
                          const real *q, const real *k, const real *v, int B, int T, int nh, int hd);

    /* out = silu(gate) ⊙ up ; backward overwrites dgate, dup */
    void (*swiglu_fwd)(real *out, const real *gate, const real *up, size_t n);
    void (*swiglu_bwd)(real *dgate, real *dup, const real *dout, const real *gate,
                       const real *up, size_t n);

    /* y = a·x + b·y */
    void (*axpby)(real *y, real a, const real *x, real b, size_t n);
    /* out[N,d] = lam ⊙ in, lam of length c ∈ {1, d} (SkipInit, LayerScale) */
    void (*chscale_fwd)(real *out, const real *in, const real *lam, int N, int d, int c);
    /* din += lam ⊙ dout; dlam += Σ dout ⊙ in */
    void (*chscale_bwd)(real *din, real *dlam, const real *dout, const real *in,
                        const real *lam, int N, int d, int c);

    /* Per row: loss[n] = logsumexp(logits[n]) - logits[n][tgt[n]] (0 where
     * tgt < 0). The logits are overwritten by grad_scale·(softmax − onehot),
     * the gradient of grad_scale·Σ loss (zero rows where tgt < 0). */
    void (*cross_entropy)(real *loss, real *logits, const int32_t *tgt, int N, int V,
                          real grad_scale);

    /* Adam with bias correction and decoupled weight decay (AdamW). */
    void (*adam)(real *p, const real *g, real *m, real *v, size_t n, real lr, real b1, real b2,
                 real eps, real wd, long step);

    /* Reductions return double on the host. */
    double (*sum)(const real *x, size_t n);
    double (*sumsq)(const real *x, size_t n);
    double (*dot)(const real *x, const real *y, size_t n);
    /* Σ over rows of arccos(cos(a_n, b_n))/π for [N,d] */
    double (*angular_sum)(const real *a, const real *b, int N, int d);
};

extern const struct ops ops_cpu;

#endif
