#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/fast_exp.h"

/* The state holds, per (batch, head), the T×T probabilities P of the forward,
 * a T×T scratch for the backward's dP, and the head's rotated q and k
 * ([T, hd] each), so the backward needs no allocation. Each (batch, head)
 * is one OpenMP task whose matmuls are strided views into the packed
 * [B,T,3,nh,hd] rows; OpenBLAS's OpenMP build runs them single-threaded
 * inside the parallel region. */
static size_t head_state(int T, int hd) { return (size_t)2 * T * T + (size_t)2 * T * hd; }

size_t cpu_attn_state_size(int B, int T, int nh, int hd)
{
    return (size_t)B * nh * head_state(T, hd);
}

void cpu_attention_fwd(act *out, real *state, const act *qkv, const real *cos, const real *sin,
                       int B, int T, int nh, int hd)
{
    int d = nh * hd, ld = 3 * d;
    real scale = (real)(1.0 / sqrt((double)hd));
#pragma omp parallel for schedule(dynamic, 1)
    for (int bh = 0; bh < B * nh; bh++) {
        int b = bh / nh, h = bh % nh;
        const real *q = AC(qkv) + (size_t)b * T * ld + (size_t)h * hd, *k = q + d, *v = q + 2 * d;
        real *o = A(out) + (size_t)b * T * d + (size_t)h * hd;
        real *P = state + (size_t)bh * head_state(T, hd);
        real *qr = P + (size_t)2 * T * T, *kr = qr + (size_t)T * hd;
        cpu_rope_head(qr, (size_t)hd, q, (size_t)ld, T, hd, cos, sin, 1);
        cpu_rope_head(kr, (size_t)hd, k, (size_t)ld, T, hd, cos, sin, 1);
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, scale, qr, hd, kr, hd, 0, P, T);
        for (int i = 0; i < T; i++) {
            real *row = P + (size_t)i * T;
            real mx = row[0], z = 0;
#pragma omp simd reduction(max : mx)
            for (int j = 1; j <= i; j++)
                mx = row[j] > mx ? row[j] : mx;
#pragma omp simd reduction(+ : z)
            for (int j = 0; j <= i; j++) {
                row[j] = fast_exp(row[j] - mx);
                z += row[j];
            }
            real inv = 1 / z;
#pragma omp simd
            for (int j = 0; j <= i; j++)
                row[j] *= inv;
            for (int j = i + 1; j < T; j++)
                row[j] = 0;
        }
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, 1, P, T, v, ld, 0, o, d);
    }
}

/* dP = dO·Vᵀ, dV = Pᵀ·dO, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = s·dS·K, dK = s·dSᵀ·Q
 * with Q, K rotated; then dQ and dK turned back by the transposed rotation */
void cpu_attention_bwd(act *dqkv, const act *dout, const act *out, real *state, const act *qkv,
                       const real *cos, const real *sin, int B, int T, int nh, int hd)
{
    (void)out;
    int d = nh * hd, ld = 3 * d;
    real scale = (real)(1.0 / sqrt((double)hd));
#pragma omp parallel for schedule(dynamic, 1)
    for (int bh = 0; bh < B * nh; bh++) {
        int b = bh / nh, h = bh % nh;
        size_t row0 = (size_t)b * T * ld + (size_t)h * hd;
        const real *v = AC(qkv) + row0 + 2 * d;
        real *dq = A(dqkv) + row0, *dk = dq + d, *dv = dq + 2 * d;
        const real *dO = AC(dout) + (size_t)b * T * d + (size_t)h * hd;
        const real *P = state + (size_t)bh * head_state(T, hd);
        real *dS = state + (size_t)bh * head_state(T, hd) + (size_t)T * T;
        const real *qr = P + (size_t)2 * T * T, *kr = qr + (size_t)T * hd;
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1, dO, d, v, ld, 0, dS, T);
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1, P, T, dO, d, 0, dv, ld);
        for (int i = 0; i < T; i++) {
            const real *p = P + (size_t)i * T;
            real *g = dS + (size_t)i * T;
            real a = 0;
#pragma omp simd reduction(+ : a)
            for (int j = 0; j <= i; j++)
                a += p[j] * g[j];
#pragma omp simd
            for (int j = 0; j <= i; j++)
                g[j] = p[j] * (g[j] - a);
            for (int j = i + 1; j < T; j++)
                g[j] = 0;
        }
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, scale, dS, T, kr, hd, 0, dq, ld);
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, scale, dS, T, qr, hd, 0, dk, ld);
        cpu_rope_head(dq, (size_t)ld, dq, (size_t)ld, T, hd, cos, sin, -1);
        cpu_rope_head(dk, (size_t)ld, dk, (size_t)ld, T, hd, cos, sin, -1);
    }
}
