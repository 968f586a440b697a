#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/fast_exp.h"

/* The state holds, per (batch, head), the T×T probabilities P of the forward
 * and a T×T scratch for the backward's dP, so the backward needs no
 * allocation. Each (batch, head) is one OpenMP task whose matmuls are
 * strided views into the packed [B,T,3,nh,hd] rows; OpenBLAS's OpenMP build
 * runs them single-threaded inside the parallel region. */
size_t cpu_attn_state_size(int B, int T, int nh) { return (size_t)2 * B * nh * T * T; }

void cpu_attention_fwd(act *out, real *state, const act *qkv, int B, int T, int nh, int hd)
{
    int d = nh * hd, ld = 3 * d;
    real scale = (real)(1.0 / sqrt((double)hd));
#pragma omp parallel for schedule(dynamic, 1)
    for (int bh = 0; bh < B * nh; bh++) {
        int b = bh / nh, h = bh % nh;
        const real *q = AC(qkv) + (size_t)b * T * ld + (size_t)h * hd, *k = q + d, *v = q + 2 * d;
        real *o = A(out) + (size_t)b * T * d + (size_t)h * hd;
        real *P = state + (size_t)bh * 2 * T * T;
        GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, scale, q, ld, k, ld, 0, P, T);
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

/* dP = dO·Vᵀ, dV = Pᵀ·dO, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = s·dS·K, dK = s·dSᵀ·Q */
void cpu_attention_bwd(act *dqkv, const act *dout, const act *out, real *state, const act *qkv,
                       int B, int T, int nh, int hd)
{
    (void)out;
    int d = nh * hd, ld = 3 * d;
    real scale = (real)(1.0 / sqrt((double)hd));
#pragma omp parallel for schedule(dynamic, 1)
    for (int bh = 0; bh < B * nh; bh++) {
        int b = bh / nh, h = bh % nh;
        size_t row0 = (size_t)b * T * ld + (size_t)h * hd;
        const real *q = AC(qkv) + row0, *k = q + d, *v = q + 2 * d;
        real *dq = A(dqkv) + row0, *dk = dq + d, *dv = dq + 2 * d;
        const real *dO = AC(dout) + (size_t)b * T * d + (size_t)h * hd;
        const real *P = state + (size_t)bh * 2 * T * T;
        real *dS = state + (size_t)bh * 2 * T * T + (size_t)T * T;
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
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, scale, dS, T, k, ld, 0, dq, ld);
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, scale, dS, T, q, ld, 0, dk, ld);
    }
}
