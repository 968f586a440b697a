/* The CPU backend's internal declarations: one file per op family, gathered
 * into the ops table by ops_cpu.c. fp32 (or fp64 for gradient checks),
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

real *cpu_alloc(size_t n);
int32_t *cpu_alloc_i32(size_t n);
void cpu_free(void *p);
void cpu_zero(real *p, size_t n);
void cpu_copy(real *dst, const real *src, size_t n);
void cpu_upload_i32(int32_t *dst, const int32_t *host, size_t n);

void cpu_matmul_fwd(real *out, const real *in, const real *w, int N, int In, int Out);
void cpu_matmul_bwd(real *din, real *dw, const real *dout, const real *in, const real *w, int N,
                    int In, int Out);
void cpu_embedding_fwd(real *out, const int32_t *tok, const real *table, int N, int d);
void cpu_embedding_bwd(real *dtable, const real *dout, const int32_t *tok, int N, int d);
void cpu_rmsnorm_fwd(real *out, real *rstd, const real *x, const real *g, int N, int d, real s,
                     real eps);
void cpu_rmsnorm_bwd(real *dx, real *dg, const real *dout, const real *x, const real *g,
                     const real *rstd, int N, int d, real s);
void cpu_rope(real *out, const real *in, int B, int T, int nh, int hd, real theta, int dir);
size_t cpu_attn_state_size(int B, int T, int nh);
void cpu_attention_fwd(real *out, real *state, const real *q, const real *k, const real *v, int B,
                       int T, int nh, int hd);
void cpu_attention_bwd(real *dq, real *dk, real *dv, const real *dout, const real *state,
                       const real *q, const real *k, const real *v, int B, int T, int nh, int hd);
void cpu_swiglu_fwd(real *out, const real *gate, const real *up, size_t n);
void cpu_swiglu_bwd(real *dgate, real *dup, const real *dout, const real *gate, const real *up,
                    size_t n);
void cpu_axpby(real *y, real a, const real *x, real b, size_t n);
void cpu_chscale_fwd(real *out, const real *in, const real *lam, int N, int d, int c);
void cpu_chscale_bwd(real *din, real *dlam, const real *dout, const real *in, const real *lam,
                     int N, int d, int c);
void cpu_cross_entropy(real *loss, real *logits, const int32_t *tgt, int N, int V,
                       real grad_scale);
void cpu_adam(real *p, const real *g, real *m, real *v, size_t n, real lr, real b1, real b2,
              real eps, real wd, long step);
double cpu_sum(const real *x, size_t n);
double cpu_sumsq(const real *x, size_t n);
double cpu_dot(const real *x, const real *y, size_t n);
double cpu_angular_sum(const real *a, const real *b, int N, int d);


#endif
