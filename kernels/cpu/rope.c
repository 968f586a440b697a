#include <math.h>

#include "kernels/cpu/cpu.h"

/* inv_freq_i = θ^(−2i/hd) as in the Hugging Face LLaMA; the angle and its
 * sine and cosine are taken in double, which costs little beside the
 * rotations and keeps the float and double builds on the same values. */
void cpu_rope(real *out, const real *in, int B, int T, int nh, int hd, real theta, int dir)
{
    int h2 = hd / 2;
    /* one angle per (position, pair), applied to every sequence and head */
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++)
        for (int i = 0; i < h2; i++) {
            double a = t * pow((double)theta, -2.0 * i / hd);
            real c = (real)cos(a), s = (real)(dir * sin(a));
            for (int b = 0; b < B; b++)
                for (int h = 0; h < nh; h++) {
                    size_t o = (((size_t)b * T + t) * nh + h) * hd;
                    real x1 = in[o + i], x2 = in[o + i + h2];
                    out[o + i] = x1 * c - x2 * s;
                    out[o + i + h2] = x2 * c + x1 * s;
                }
        }
}
