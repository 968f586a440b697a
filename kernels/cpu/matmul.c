#include "kernels/cpu/cpu.h"

void cpu_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                    const act *res, real b)
{
    real *o = A(out);
    if (res && res != out)
        cpu_copy(o, AC(res), (size_t)N * Out);
    GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, Out, In, a, AC(in), In, AC(w), In,
         res ? b : 0, o, Out);
}

void cpu_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                    int In, int Out, real a, const act *res, real b)
{
    if (dw)
        GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, Out, In, N, a, AC(dout), Out, AC(in), In, 1,
             dw, In);
    if (din) {
        if (res && res != din)
            cpu_copy(A(din), AC(res), (size_t)N * In);
        GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, In, Out, a, AC(dout), Out, AC(w), In,
             res ? b : 0, A(din), In);
    }
}
