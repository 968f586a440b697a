#include <math.h>
#include <omp.h>

#include "kernels/cpu/cpu.h"

#define MAX_THREADS 256

/* Each thread sums a fixed contiguous range; partials are added in thread
 * order, so a sum repeats exactly at a given thread count. */
#define FIXED_ORDER_SUM(N, EXPR)                                                           \
    double part[MAX_THREADS] = {0};                                                        \
    int used = 1;                                                                          \
    _Pragma("omp parallel") {                                                              \
        int nt = omp_get_num_threads(), t = omp_get_thread_num();                          \
        if (nt > MAX_THREADS) nt = MAX_THREADS;                                            \
        if (t == 0) used = nt;                                                             \
        if (t < nt) {                                                                      \
            size_t lo = (size_t)((double)(N) * t / nt), hi = (size_t)((double)(N) * (t + 1) / nt); \
            if (t == nt - 1) hi = (N);                                                     \
            double acc = 0;                                                                \
            for (size_t i = lo; i < hi; i++) acc += (EXPR);                                \
            part[t] = acc;                                                                 \
        }                                                                                  \
    }                                                                                      \
    double total = 0;                                                                      \
    for (int t = 0; t < used; t++) total += part[t];                                       \
    return total;

double cpu_sum(const real *x, size_t n) { FIXED_ORDER_SUM(n, (double)x[i]) }
double cpu_sumsq(const real *x, size_t n) { FIXED_ORDER_SUM(n, (double)x[i] * x[i]) }
double cpu_dot(const real *x, const real *y, size_t n) { FIXED_ORDER_SUM(n, (double)x[i] * y[i]) }
double cpu_dist2(const real *x, const real *y, size_t n)
{
    FIXED_ORDER_SUM(n, ((double)x[i] - y[i]) * ((double)x[i] - y[i]))
}
double cpu_act_sum(const act *x, size_t n) { return cpu_sum(AC(x), n); }
double cpu_act_sumsq(const act *x, size_t n) { return cpu_sumsq(AC(x), n); }

static double angular_row(const real *a, const real *b, int d)
{
    double ab = 0, aa = 0, bb = 0;
    for (int j = 0; j < d; j++) {
        ab += (double)a[j] * b[j];
        aa += (double)a[j] * a[j];
        bb += (double)b[j] * b[j];
    }
    double c = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 1.0;
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    return acos(c) / M_PI;
}

double cpu_angular_sum(const act *a, const act *b, int N, int d)
{
    FIXED_ORDER_SUM((size_t)N, angular_row(AC(a) + i * (size_t)d, AC(b) + i * (size_t)d, d))
}

/* Threads split the columns; each walks every row in order. */
void cpu_colsum_accumulate(real *dst, const real *a, const real *b, const real *rs, real s, int N,
                           int d)
{
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int lo = (int)((long)d * t / nt), hi = (int)((long)d * (t + 1) / nt);
        for (int n = 0; n < N; n++) {
            const real *ar = a + (size_t)n * d, *br = b + (size_t)n * d;
            real sr = rs ? s * rs[n] : s;
            for (int j = lo; j < hi; j++)
                dst[j] += ar[j] * sr * br[j];
        }
    }
}
