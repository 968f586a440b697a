/* The CPU backend's internal declarations: one file per op family, gathered
 * into the ops table by ops_cpu.c. fp32 (or fp64 for gradient checks), so
 * act is real here and every act pointer is a real pointer (A() below);
 * OpenMP across rows or heads, OpenBLAS for every matmul. Reductions run in
 * a fixed order (per-thread partials in thread order, column ranges in row
 * order), so results repeat bit for bit at a given thread count. */
#ifndef COD_CPU_H
#define COD_CPU_H

#include <cblas.h>

#include "kernels/ops.h"

#ifdef COD_REAL_DOUBLE
#define GEMM cblas_dgemm
#else
#define GEMM cblas_sgemm
#endif

/* an act buffer of this backend as the reals it holds */
#define A(p) ((real *)(p))
#define AC(p) ((const real *)(p))

real *cpu_alloc(size_t n);
act *cpu_alloc_act(size_t n);
int32_t *cpu_alloc_i32(size_t n);
void cpu_free(void *p);
void cpu_zero(real *p, size_t n);
void cpu_zero_act(act *p, size_t n);
void cpu_copy(real *dst, const real *src, size_t n);
void cpu_copy_act(act *dst, const act *src, size_t n);
void cpu_upload_act(act *dst, const real *host, size_t n);
void cpu_download_act(real *host, const act *src, size_t n);
void cpu_upload_i32(int32_t *dst, const int32_t *host, size_t n);
void cpu_to_act(act *dst, const real *src, size_t n);
int cpu_error(char *err, size_t errlen);

void cpu_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                    const act *res, real b);
void cpu_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                    int In, int Out, real a, const act *res, real b);
void cpu_embedding_fwd(act *out, const int32_t *tok, const act *table, int N, int d);
void cpu_embedding_bwd(real *dtable, const act *dout, const int32_t *tok, const int32_t *pos,
                       const int32_t *start, int n_groups, int d);
void cpu_rmsnorm_fwd(act *out, real *rstd, const act *x, const real *g, int N, int d, real s_in,
                     real s_out, real eps, const act *res, real b);
void cpu_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                     const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                     real b);
/* One head's T rows (strided by ld) rotated into dst, which may be src;
 * dir = −1 is the transpose, the backward. Attention's helper (ops.h). */
void cpu_rope_head(real *dst, size_t ld_dst, const real *src, size_t ld_src, int T, int hd,
                   const real *cos, const real *sin, int dir);
size_t cpu_attn_state_size(int B, int T, int nh, int hd);
void cpu_attention_fwd(act *out, real *state, const act *qkv, const real *cos, const real *sin,
                       int B, int T, int nh, int hd);
void cpu_attention_bwd(act *dqkv, const act *dout, const act *out, real *state, const act *qkv,
                       const real *cos, const real *sin, int B, int T, int nh, int hd);
void cpu_swiglu_fwd(act *h, const act *gu, int N, int f);
void cpu_swiglu_bwd(act *dgu, act *h, const act *dh, const act *gu, int N, int f);
void cpu_axpby(act *y, real a, const act *x, real b, size_t n);
void cpu_bias_add(act *y, const real *bias, int N, int d);
void cpu_repeat_kv(act *out, const act *in, int N, int nh, int nkv, int hd);
void cpu_chscale_fwd(act *out, const act *in, const real *lam, int N, int d, int c);
void cpu_chscale_bwd(act *din, real *dlam, const act *dout, const act *in, const real *lam, int N,
                     int d, int c);
void cpu_cross_entropy(real *loss, act *logits, const int32_t *tgt, int N, int V,
                       real grad_scale);
double cpu_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr, real b1,
                real b2, real eps, real wd, long step, double clip,
                const struct adam_extra *x);
double cpu_sum(const real *x, size_t n);
double cpu_sumsq(const real *x, size_t n);
double cpu_dist2(const real *x, const real *y, size_t n);
double cpu_dot(const real *x, const real *y, size_t n);
double cpu_act_sum(const act *x, size_t n);
double cpu_act_sumsq(const act *x, size_t n);
double cpu_angular_sum(const act *a, const act *b, int N, int d);
/* dst[j] += Σ_n a[n,j]·b[n,j]·(rs ? rs[n] : 1)·s, by column ranges in row order */
void cpu_colsum_accumulate(real *dst, const real *a, const real *b, const real *rs, real s, int N,
                           int d);

#endif
