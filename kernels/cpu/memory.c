#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

/* 64-byte alignment keeps rows on cache lines for the vectorised loops. */
static void *aligned_zeroed(size_t bytes)
{
    if (bytes == 0)
        bytes = 64;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded);
    if (p)
        memset(p, 0, rounded);
    return p;
}

real *cpu_alloc(size_t n) { return aligned_zeroed(n * sizeof(real)); }
int32_t *cpu_alloc_i32(size_t n) { return aligned_zeroed(n * sizeof(int32_t)); }
void cpu_free(void *p) { free(p); }
void cpu_zero(real *p, size_t n) { memset(p, 0, n * sizeof(real)); }
void cpu_copy(real *dst, const real *src, size_t n) { memmove(dst, src, n * sizeof(real)); }
void cpu_upload_i32(int32_t *dst, const int32_t *host, size_t n)
{
    memmove(dst, host, n * sizeof(int32_t));
}
