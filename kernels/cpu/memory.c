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
act *cpu_alloc_act(size_t n) { return aligned_zeroed(n * sizeof(real)); }
int32_t *cpu_alloc_i32(size_t n) { return aligned_zeroed(n * sizeof(int32_t)); }
void cpu_free(void *p) { free(p); }
void cpu_zero(real *p, size_t n) { memset(p, 0, n * sizeof(real)); }
void cpu_zero_act(act *p, size_t n) { memset(p, 0, n * sizeof(real)); }
void cpu_copy(real *dst, const real *src, size_t n) { memmove(dst, src, n * sizeof(real)); }
void cpu_copy_act(act *dst, const act *src, size_t n) { memmove(dst, src, n * sizeof(real)); }
void cpu_upload_act(act *dst, const real *host, size_t n) { cpu_copy(A(dst), host, n); }
void cpu_download_act(real *host, const act *src, size_t n) { cpu_copy(host, AC(src), n); }
void cpu_to_act(act *dst, const real *src, size_t n) { cpu_copy(A(dst), src, n); }

void cpu_upload_i32(int32_t *dst, const int32_t *host, size_t n)
{
    memmove(dst, host, n * sizeof(int32_t));
}

/* Nothing on the CPU faults short of the process itself. */
int cpu_error(char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    return 0;
}
