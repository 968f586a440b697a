/* What the GPU checks that compare an op with the CPU backend share: a
 * tensor with a host, a CPU and a CUDA copy (struct t3), made of fresh
 * random values (bf16-exact where the op takes bf16) or poisoned with NaN
 * where the op overwrites it, and the relative L2 error of the CUDA copy
 * against the CPU's under tolerances derived from bf16's unit roundoff
 * (test_ops_cuda.c says how). Functions static inline: each program uses
 * some. */
#ifndef COD_TESTS_GPU_T3_H
#define COD_TESTS_GPU_T3_H

#include <math.h>
#include <stdlib.h>

#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "trainer/rng.h"

static const struct ops *G = &ops_cuda, *C = &ops_cpu;
static const double U = 1.0 / 256; /* bf16: 8 significant bits, round to nearest */
#define ROUND1 (1.1 * U)
#define ROUND2 (2.0 * U)
#define ROUND3 (3.0 * U)
#define ROUND4 (4.0 * U)
#define FP32 1e-5
static struct rng R;

/* a host, a CPU and a CUDA copy of one tensor; is_act: the op takes it as
 * act (bf16 on the device), so its values are bf16 to begin with */
struct t3 {
    size_t n;
    int is_act;
    real *h;
    void *c, *g;
};

static inline void push(struct t3 *t)
{
    if (t->is_act) {
        C->upload_act(t->c, t->h, t->n);
        G->upload_act(t->g, t->h, t->n);
    } else {
        C->upload(t->c, t->h, t->n);
        G->upload(t->g, t->h, t->n);
    }
}

static inline struct t3 make_t(size_t n, double scale, int is_act)
{
    struct t3 t = {n, is_act, malloc(n * sizeof(real) + 4), NULL, NULL};
    t.c = is_act ? (void *)C->alloc_act(n) : (void *)C->alloc(n);
    t.g = is_act ? (void *)G->alloc_act(n) : (void *)G->alloc(n);
    if (!t.h || !t.c || !t.g) {
        fprintf(stderr, "out of memory for %zu elements\n", n);
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        real x = (real)(scale * (2 * rng_uniform(&R) - 1));
        t.h[i] = is_act ? bf16_round(x) : x;
    }
    push(&t);
    return t;
}

static inline struct t3 make(size_t n, double scale) { return make_t(n, scale, 1); }
static inline struct t3 make_real(size_t n, double scale) { return make_t(n, scale, 0); }

/* an output the op overwrites: NaN on both sides */
static inline struct t3 poisoned_t(size_t n, int is_act)
{
    struct t3 t = make_t(n, 1, is_act);
    for (size_t i = 0; i < n; i++)
        t.h[i] = NAN;
    push(&t);
    return t;
}

static inline struct t3 poisoned(size_t n) { return poisoned_t(n, 1); }
static inline struct t3 poisoned_real(size_t n) { return poisoned_t(n, 0); }

static inline void drop(struct t3 *t)
{
    free(t->h);
    C->free(t->c);
    G->free(t->g);
}

static inline int32_t *i32_dev(const int32_t *host, size_t n)
{
    int32_t *p = G->alloc_i32(n);
    G->upload_i32(p, host, n);
    return p;
}

/* ‖cuda − cpu‖/‖cpu‖ (NaN anywhere fails); worst keeps the largest ratio
 * of error to tolerance seen, for the summary line */
static double worst_ratio;
/* a copy: some checks name themselves in a buffer of their own frame */
static char worst_what[128];

static inline double rel_err(const struct t3 *t)
{
    real *got = malloc(t->n * sizeof(real) + 4), *ref = malloc(t->n * sizeof(real) + 4);
    if (t->is_act) {
        G->download_act(got, t->g, t->n);
        C->download_act(ref, t->c, t->n);
    } else {
        G->download(got, t->g, t->n);
        C->download(ref, t->c, t->n);
    }
    double num = 0, den = 0;
    for (size_t i = 0; i < t->n; i++) {
        double e = (double)got[i] - ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
    }
    free(got);
    free(ref);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static inline int same(const struct t3 *t, double tol, const char *what)
{
    double e = rel_err(t);
    if (e / tol > worst_ratio) {
        worst_ratio = e / tol;
        snprintf(worst_what, sizeof worst_what, "%s", what);
    }
    printf("  %-40s rel %.3e  limit %.2e (%.2f of it)\n", what, e, tol, e / tol);
    return e < tol;
}

#define SAME(t, tol, what) CHECK(same(&(t), tol, what), "%s over its limit", what)

#define SAME_D(got, ref, tol, what)                                                            \
    do {                                                                                       \
        double g_ = (got), r_ = (ref), e_ = fabs(g_ - r_) / (fabs(r_) > 0 ? fabs(r_) : 1);     \
        CHECK(e_ < (tol), "%s: %.10g vs %.10g (relative %.3g)", what, g_, r_, e_);            \
    } while (0)

#endif
