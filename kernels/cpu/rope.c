#include "kernels/cpu/cpu.h"

/* The tables hold cos and sin of t·θ^(−2i/hd), taken in double by the
 * model, so both backends rotate by the same values. */
void cpu_rope_head(real *dst, size_t ld_dst, const real *src, size_t ld_src, int T, int hd,
                   const real *cos, const real *sin, int dir)
{
    int h2 = hd / 2;
    for (int t = 0; t < T; t++) {
        const real *c = cos + (size_t)t * h2, *s = sin + (size_t)t * h2, *p = src + t * ld_src;
        real *o = dst + t * ld_dst;
        for (int i = 0; i < h2; i++) {
            real x1 = p[i], x2 = p[i + h2], sn = dir * s[i];
            o[i] = x1 * c[i] - x2 * sn;
            o[i + h2] = x2 * c[i] + x1 * sn;
        }
    }
}
