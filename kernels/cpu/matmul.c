#include "kernels/cpu/cpu.h"

void cpu_matmul_fwd(real *out, const real *in, const real *w, int N, int In, int Out)
{
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, Out, In, 1, in, In, w, In, 0, out, Out);
}

void cpu_matmul_bwd(real *din, real *dw, const real *dout, const real *in, const real *w, int N,
                    int In, int Out)
{
    if (din)
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, In, Out, 1, dout, Out, w, In, 1, din, In);
    GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, Out, In, N, 1, dout, Out, in, In, 1, dw, In);
}
