#include <string.h>

#include "kernels/cpu/cpu.h"

void cpu_repeat_kv(act *out, const act *in, int N, int nh, int nkv, int hd)
{
    size_t qd = (size_t)nh * hd, kvd = (size_t)nkv * hd, win = qd + 2 * kvd;
    int rep = nh / nkv;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *src = AC(in) + (size_t)n * win;
        real *dst = A(out) + (size_t)n * 3 * qd;
        memcpy(dst, src, qd * sizeof(real));
        for (int h = 0; h < nh; h++) {
            memcpy(dst + qd + (size_t)h * hd, src + qd + (size_t)(h / rep) * hd, hd * sizeof(real));
            memcpy(dst + 2 * qd + (size_t)h * hd, src + qd + kvd + (size_t)(h / rep) * hd,
                   hd * sizeof(real));
        }
    }
}
