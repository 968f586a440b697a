/* The CUDA backend's internal declarations: one file per op family,
 * gathered into the table by ops_cuda.cu. All work goes to the per-thread
 * default stream of the current device (the sources are built with nvcc's
 * --default-stream per-thread, and library calls name cudaStreamPerThread),
 * so ops run in call order, a micro-batch can be recorded as a CUDA graph
 * (graph.cu), and download and the reductions (which copy a result back)
 * are where the host waits. act buffers hold bf16 (BF() below), real
 * buffers fp32. */
#ifndef COD_CUDA_INTERNAL_H
#define COD_CUDA_INTERNAL_H

#include <cuda_bf16.h>

#include "kernels/cuda/ops_cuda.h"

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is built for the float trainer");

typedef __nv_bfloat16 bf16;
#define BF(p) ((bf16 *)(p))
#define BFC(p) ((const bf16 *)(p))

/* memory.cu */
void *cuda_malloc_tracked(size_t bytes, const char *op); /* NULL when out of memory */
void cuda_free_tracked(void *p);
real *cuda_alloc(size_t n);
act *cuda_alloc_act(size_t n);
int32_t *cuda_alloc_i32(size_t n);
void cuda_free(void *p);
void cuda_zero(real *p, size_t n);
void cuda_zero_act(act *p, size_t n);
void cuda_copy(real *dst, const real *src, size_t n);
void cuda_copy_act(act *dst, const act *src, size_t n);
void cuda_upload(real *dst, const real *host, size_t n);
void cuda_download(real *host, const real *src, size_t n);
void cuda_upload_act(act *dst, const real *host, size_t n);
void cuda_download_act(real *host, const act *src, size_t n);
void cuda_upload_i32(int32_t *dst, const int32_t *host, size_t n);
/* A grow-only device buffer of at least `bytes` for one op's partial
 * results; valid until the next call. NULL (with the failure recorded). */
void *cuda_scratch(size_t bytes, const char *op);
/* Changes whenever cuda_scratch moves its memory: a recording that used
 * the old memory can no longer be replayed. */
unsigned long cuda_scratch_generation(void);

/* library.cu: a library cod does not link, opened by soname (the loader's
 * path, then the toolkit's lib64) with its entry points resolved into the
 * slots; NULL with why (what: the library in words) */
struct cuda_symbol {
    void **slot;
    const char *name;
};
void *cuda_open_library(const char *soname, const char *what, const struct cuda_symbol *syms,
                        size_t n, char *why, size_t len);

/* graph.cu: the table's recording entries */
int cuda_record_begin(char *err, size_t errlen);
recording *cuda_record_end(char *err, size_t errlen);
int cuda_replay(recording *r);
void cuda_recording_free(recording *r);

/* matmul.cu: the second stream of the weight gradients (ops.h) */
extern "C" int cuda_wgrad_beside(void);
long cuda_wgrad_mark(void);
void cuda_wgrad_join(long mark);

void cuda_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                     const act *res, real b);
void cuda_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                     int In, int Out, real a, const act *res, real b);
void cuda_embedding_fwd(act *out, const int32_t *tok, const act *table, int N, int d);
void cuda_embedding_bwd(real *dtable, const act *dout, const int32_t *tok, const int32_t *pos,
                        const int32_t *start, int n_groups, int d);
void cuda_rmsnorm_fwd(act *out, real *rstd, const act *x, const real *g, int N, int d, real s_in,
                      real s_out, real eps, const act *res, real b);
void cuda_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                      const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                      real b);
size_t cuda_attn_state_size(int B, int T, int nh, int hd);
void cuda_attention_fwd(act *out, real *state, const act *qkv, const real *cos, const real *sin,
                        int B, int T, int nh, int hd);
void cuda_attention_bwd(act *dqkv, const act *dout, const act *out, real *state, const act *qkv,
                        const real *cos, const real *sin, int B, int T, int nh, int hd);
void cuda_swiglu_fwd(act *h, const act *gu, int N, int f);
void cuda_swiglu_bwd(act *dgu, act *h, const act *dh, const act *gu, int N, int f);
void cuda_axpby(act *y, real a, const act *x, real b, size_t n);
void cuda_bias_add(act *y, const real *bias, int N, int d);
void cuda_repeat_kv(act *out, const act *in, int N, int nh, int nkv, int hd);
void cuda_to_act(act *dst, const real *src, size_t n);
void cuda_chscale_fwd(act *out, const act *in, const real *lam, int N, int d, int c);
void cuda_chscale_bwd(act *din, real *dlam, const act *dout, const act *in, const real *lam,
                      int N, int d, int c);
void cuda_cross_entropy(real *loss, act *logits, const int32_t *tgt, int N, int V,
                        real grad_scale);
double cuda_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr, real b1,
                 real b2, real eps, real wd, long step, double clip,
                 const struct adam_extra *x);
double cuda_sum(const real *x, size_t n);
double cuda_sumsq(const real *x, size_t n);
double cuda_dist2(const real *x, const real *y, size_t n);
double cuda_act_sum(const act *x, size_t n);
double cuda_act_sumsq(const act *x, size_t n);
double cuda_angular_sum(const act *a, const act *b, int N, int d);

/* reduce.cu: dst[j] += s · Σ_n a[n,j]·b[n,j]·(rs ? rs[n] : 1) over N rows of
 * d columns, and dst[0] += Σ a⊙b; both in a fixed order, without atomics */
void cuda_colsum_accumulate(real *dst, const bf16 *a, const bf16 *b, const real *rs, real s,
                            int N, int d, const char *op);
void cuda_dot_accumulate(real *dst, const bf16 *a, const bf16 *b, size_t n, const char *op);
/* dst[j] += s · Σ_c partial[c][j], the chunks in order */
void cuda_colsum_finish(real *dst, const real *partial, int chunks, int d, real s, const char *op);

/* attention.cu (the CUDA-core kernels, and the choice of kernels),
 * attention_mma.cu (tensor cores), attention_cudnn.cu (cuDNN's fused
 * attention) and rope.cu, the rotation they take q and k through */
extern int cuda_attention_fallback;
/* what the last attention ran, and why (ops.h: attention_choice) */
const char *cuda_attention_choice(void);
/* 0 when COD_ATTENTION and COD_CUDA_ATTENTION can hold (cuDNN, where asked
 * for, loaded and accepted), else -1 with err: device.cu's probe asks */
int cuda_attention_setting(char *err, size_t len);
void cuda_rope(bf16 *dst, int ds, const bf16 *src, int ss, int N, int T, int n_vec, int hd,
               const float *cos, const float *sin, int dir);
int cuda_attention_mma_takes(int hd);
/* rot: [B·T][2·nh·hd], q and k rotated, written here for the backward */
void cuda_attention_mma_fwd(bf16 *out, float *lse, bf16 *rot, const bf16 *qkv, const float *cos,
                            const float *sin, int B, int T, int nh, int hd);
/* also fills D = rowsum(dO ⊙ O), [B·nh·T] */
void cuda_attention_mma_bwd(bf16 *dqkv, const bf16 *dout, const bf16 *out, const float *lse,
                            float *D, const bf16 *rot, const bf16 *qkv, const float *cos,
                            const float *sin, int B, int T, int nh, int hd);
/* cuDNN: loaded, its version accepted and a handle made for the current
 * device: 0, else -1 with why */
int cuda_cudnn_usable(char *why, size_t len);
/* "cuDNN 9.19.0" */
const char *cuda_cudnn_name(void);
/* 1 when cuDNN takes the shape (both graphs built now or before, kept), 0
 * when it does not (why), -1 while a step is being recorded and the graphs
 * are not built (the recording fails) */
int cuda_cudnn_takes(int B, int T, int nh, int hd, char *why, size_t len);
/* As the tensor-core kernels, for a shape cuDNN takes: 0, or -1 having
 * done nothing (why: a buffer not as aligned as the graphs assume) */
int cuda_cudnn_attention_fwd(bf16 *out, float *lse, bf16 *rot, const bf16 *qkv, const float *cos,
                             const float *sin, int B, int T, int nh, int hd, char *why,
                             size_t len);
/* fills D = rowsum(dO ⊙ O) too */
int cuda_cudnn_attention_bwd(bf16 *dqkv, const bf16 *dout, const bf16 *out, const float *lse,
                             float *D, const bf16 *rot, const bf16 *qkv, const float *cos,
                             const float *sin, int B, int T, int nh, int hd, char *why,
                             size_t len);

#endif
