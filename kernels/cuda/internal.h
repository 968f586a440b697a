/* The CUDA backend's internal declarations: one file per op family,
 * gathered into the table by ops_cuda.cu. All work goes to the default
 * stream of the current device, so ops run in call order, and download and
 * the reductions (which copy a result back) are where the host waits. */
#ifndef COD_CUDA_INTERNAL_H
#define COD_CUDA_INTERNAL_H

#include "kernels/cuda/ops_cuda.h"

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is built for the float trainer");

real *cuda_alloc(size_t n);
int32_t *cuda_alloc_i32(size_t n);
void cuda_free(void *p);
void cuda_zero(real *p, size_t n);
void cuda_copy(real *dst, const real *src, size_t n);
void cuda_upload(real *dst, const real *host, size_t n);
void cuda_download(real *host, const real *src, size_t n);
void cuda_upload_i32(int32_t *dst, const int32_t *host, size_t n);

void cuda_matmul_fwd(real *out, const real *in, const real *w, int N, int In, int Out);
void cuda_matmul_bwd(real *din, real *dw, const real *dout, const real *in, const real *w, int N,
                     int In, int Out);
void cuda_embedding_fwd(real *out, const int32_t *tok, const real *table, int N, int d);
void cuda_embedding_bwd(real *dtable, const real *dout, const int32_t *tok, int N, int d);
void cuda_rmsnorm_fwd(real *out, real *rstd, const real *x, const real *g, int N, int d, real s,
                      real eps);
void cuda_rmsnorm_bwd(real *dx, real *dg, const real *dout, const real *x, const real *g,
                      const real *rstd, int N, int d, real s);
void cuda_rope(real *out, const real *in, int B, int T, int nh, int hd, real theta, int dir);
size_t cuda_attn_state_size(int B, int T, int nh);
void cuda_attention_fwd(real *out, real *state, const real *q, const real *k, const real *v, int B,
                        int T, int nh, int hd);
void cuda_attention_bwd(real *dq, real *dk, real *dv, const real *dout, const real *state,
                        const real *q, const real *k, const real *v, int B, int T, int nh, int hd);
void cuda_swiglu_fwd(real *out, const real *gate, const real *up, size_t n);
void cuda_swiglu_bwd(real *dgate, real *dup, const real *dout, const real *gate, const real *up,
                     size_t n);
void cuda_axpby(real *y, real a, const real *x, real b, size_t n);
void cuda_chscale_fwd(real *out, const real *in, const real *lam, int N, int d, int c);
void cuda_chscale_bwd(real *din, real *dlam, const real *dout, const real *in, const real *lam,
                      int N, int d, int c);
void cuda_cross_entropy(real *loss, real *logits, const int32_t *tgt, int N, int V,
                        real grad_scale);
void cuda_adam(real *p, const real *g, real *m, real *v, size_t n, real lr, real b1, real b2,
               real eps, real wd, long step);
double cuda_sum(const real *x, size_t n);
double cuda_sumsq(const real *x, size_t n);
double cuda_dot(const real *x, const real *y, size_t n);
double cuda_angular_sum(const real *a, const real *b, int N, int d);

/* dst[j] += s · Σ_n a[n,j]·b[n,j]·(rs ? rs[n] : 1) over N rows of d columns
 * (reduce.cu): the parameter gradients of RMSNorm's g and LayerScale's λ. */
void cuda_colsum_accumulate(real *dst, const real *a, const real *b, const real *rs, real s, int N,
                            int d, const char *op);
/* dst[0] += Σ a⊙b over n elements, on the device (reduce.cu). */
void cuda_dot_accumulate(real *dst, const real *a, const real *b, size_t n, const char *op);

/* The matmul precision switch of ops_cuda_exact_matmul (matmul.cu). */
extern int cuda_exact_matmul;

#endif
