/* Which cuBLASLt algorithm a matmul shape runs. cuBLASLt's heuristic
 * ranks its algorithms by a model of the GPU; its first is often not the
 * fastest at the step's shapes (the weight gradients ran at 597 TFLOP/s on
 * an H100 where the largest products reach 747). So, at a shape's first
 * product, outside a recording, the heuristic's first
 * COD_CUBLASLT_CANDIDATES (default 8, at most 16) are timed on the call's
 * own operands (a warm-up each, then the best of two rounds of three
 * products between events) and the fastest is kept for the process, and
 * appended to the cache file, which later processes read: a shape found
 * there for this device, this cuBLASLt and the same candidate is not timed
 * again. A product that accumulates into its output (the weight gradients:
 * β = 1, C = D) is timed on a copy of it, which is freed after; every
 * other output is written again by the product itself right after.
 *
 * A given algorithm computes the same bits every time (cuBLAS's
 * reproducibility: the same version, architecture and SM count; split-K
 * reductions that the algorithm orders itself); another algorithm may
 * round otherwise. So a run's results repeat bit for bit where the choices
 * do: read from one cache file, or COD_CUBLASLT_TUNE=0 (the heuristic's
 * first, as before the timing). Each choice is logged once on stderr,
 * with its time and the heuristic first's.
 *
 * COD_CUBLASLT_TUNE: 1 or unset, timed; 0, the heuristic's first (the
 * emulator's default: emu.h).
 * COD_CUBLASLT_CACHE: the file; unset, $XDG_CACHE_HOME/cod/cublaslt.txt
 * (~/.cache/cod/ without XDG_CACHE_HOME); empty, none. One line a choice,
 * appended whole (O_APPEND, so that processes sharing it do not tear each
 * other's lines); the last line for a key wins; a line that does not read
 * is named (file:line) and skipped, and its shape timed again. */
#include <cerrno>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/cuda/cublaslt.h"

/* timed unless COD_CUBLASLT_TUNE says otherwise (the emulator's: not, emu.h) */
#ifndef COD_CUBLASLT_TUNE_DEFAULT
#define COD_CUBLASLT_TUNE_DEFAULT 1
#endif

/* what identifies one algorithm among the heuristic's */
struct lt_config {
    int32_t id, splitk;
    uint32_t tile, scheme, swizzle, custom, stages;
    uint16_t inner, cluster;
};

/* a line of the cache file */
struct lt_choice {
    char device[80];
    int sms;
    size_t version;
    struct lt_shape s;
    int index;
    struct lt_config cfg;
};

enum { CHOICES_MAX = 4096, ROUNDS = 2, REPS = 3 };

static struct {
    int read, tune, candidates;
    char path[1024];
    struct lt_choice *choices;
    int n;
    int warned_write;
    int forced, offered; /* the tests' (ops_cuda_matmul_replan) */
} cache = {0, 0, 0, "", NULL, 0, 0, -1, 0};

static int setting(const char *name, int dflt, int lo, int hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) {
        fprintf(stderr, "cuda: %s must be a whole number from %d to %d, not \"%.40s\": using %d\n",
                name, lo, hi, v, dflt);
        return dflt;
    }
    return (int)x;
}

/* the cache file's path, or "" for none; its folder made where it is the default */
static void cache_path(void)
{
    const char *v = getenv("COD_CUBLASLT_CACHE");
    if (v) {
        snprintf(cache.path, sizeof cache.path, "%s", v);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[900];
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache", home);
    else
        return;
    mkdir(dir, 0755);
    strncat(dir, "/cod", sizeof dir - strlen(dir) - 1);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return;
    snprintf(cache.path, sizeof cache.path, "%s/cublaslt.txt", dir);
}

static void read_cache(void)
{
    free(cache.choices);
    cache.choices = NULL;
    cache.n = 0;
    cache.path[0] = 0;
    cache.read = 1;
    cache.tune = setting("COD_CUBLASLT_TUNE", COD_CUBLASLT_TUNE_DEFAULT, 0, 1);
    cache.candidates = setting("COD_CUBLASLT_CANDIDATES", 8, 1, LT_CANDIDATES);
    cache_path();
    if (!cache.tune)
        return;
    /* without a file the choices are kept for this process alone */
    cache.choices = (struct lt_choice *)calloc(CHOICES_MAX, sizeof *cache.choices);
    FILE *f = cache.path[0] && cache.choices ? fopen(cache.path, "r") : NULL;
    if (!f)
        return;
    char line[512];
    int at = 0;
    while (fgets(line, sizeof line, f)) {
        at++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        struct lt_choice c = {};
        struct lt_shape *s = &c.s;
        unsigned inner, cluster;
        double ms, first;
        int used = 0;
        int got = sscanf(line,
                         "v1 %79s %d %zu %d %d %d %d %d %d %d %d %d %u %u %u %d %d %u %d %u %u %u %u "
                         "%u %u %lf %lf%n",
                         c.device, &c.sms, &c.version, &s->ta, &s->tb, &s->m, &s->n, &s->k,
                         &s->lda, &s->ldb, &s->ldc, &s->c32, &s->align_a, &s->align_b,
                         &s->align_c, &c.index, &c.cfg.id, &c.cfg.tile, &c.cfg.splitk,
                         &c.cfg.scheme, &c.cfg.swizzle, &c.cfg.custom, &c.cfg.stages, &inner,
                         &cluster, &ms, &first, &used);
        if (got != 27 || (line[used] != '\n' && line[used] != 0) || c.index < 0 ||
            c.index >= LT_CANDIDATES) {
            fprintf(stderr, "cuda: %s:%d: not a cuBLASLt choice (expected \"v1\" and 27 fields); "
                            "skipped, its shape is timed again\n", cache.path, at);
            continue;
        }
        c.cfg.inner = (uint16_t)inner;
        c.cfg.cluster = (uint16_t)cluster;
        if (cache.n == CHOICES_MAX) {
            fprintf(stderr, "cuda: %s: more than %d choices; the rest are not read\n", cache.path,
                    CHOICES_MAX);
            break;
        }
        cache.choices[cache.n++] = c;
    }
    fclose(f);
}

static int config_of(const cublasLtMatmulAlgo_t *a, struct lt_config *c)
{
    const struct {
        cublasLtMatmulAlgoConfigAttributes_t attr;
        void *to;
        size_t size;
    } fields[] = {
        {CUBLASLT_ALGO_CONFIG_ID, &c->id, sizeof c->id},
        {CUBLASLT_ALGO_CONFIG_TILE_ID, &c->tile, sizeof c->tile},
        {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c->splitk, sizeof c->splitk},
        {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c->scheme, sizeof c->scheme},
        {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c->swizzle, sizeof c->swizzle},
        {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c->custom, sizeof c->custom},
        {CUBLASLT_ALGO_CONFIG_STAGES_ID, &c->stages, sizeof c->stages},
        {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c->inner, sizeof c->inner},
        {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c->cluster, sizeof c->cluster},
    };
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t written = 0;
        if (lt.MatmulAlgoConfigGetAttribute(a, fields[i].attr, fields[i].to, fields[i].size,
                                            &written) != CUBLAS_STATUS_SUCCESS)
            return -1;
    }
    return 0;
}

static void config_text(const struct lt_config *c, char *buf, size_t len)
{
    snprintf(buf, len, "algo %d, tile %u, stages %u, split-k %d", c->id, c->tile, c->stages,
             c->splitk);
}

/* the device as the cache names it: its name without spaces, and its SMs */
static int device_key(char *name, size_t len, int *sms)
{
    int dev = 0;
    cudaDeviceProp p;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return -1;
    snprintf(name, len, "%.*s", (int)len - 1, p.name);
    for (char *c = name; *c; c++)
        if (*c == ' ' || *c == '\t')
            *c = '_';
    *sms = p.multiProcessorCount;
    return 0;
}

static const struct lt_choice *cached(const char *device, int sms, size_t version,
                                      const struct lt_shape *s)
{
    for (int i = cache.n - 1; i >= 0; i--) {
        const struct lt_choice *c = &cache.choices[i];
        if (c->sms == sms && c->version == version && strcmp(c->device, device) == 0 &&
            memcmp(&c->s, s, sizeof *s) == 0)
            return c;
    }
    return NULL;
}

static void append(const struct lt_choice *c, double ms, double first)
{
    if (cache.choices && cache.n < CHOICES_MAX)
        cache.choices[cache.n++] = *c;
    if (!cache.path[0])
        return;
    const struct lt_shape *s = &c->s;
    char line[512];
    int n = snprintf(line, sizeof line,
                     "v1 %s %d %zu %d %d %d %d %d %d %d %d %d %u %u %u %d %d %u %d %u %u %u %u %u "
                     "%u %.6f %.6f\n",
                     c->device, c->sms, c->version, s->ta, s->tb, s->m, s->n, s->k, s->lda, s->ldb,
                     s->ldc, s->c32, s->align_a, s->align_b, s->align_c, c->index, c->cfg.id,
                     c->cfg.tile, c->cfg.splitk, c->cfg.scheme, c->cfg.swizzle, c->cfg.custom,
                     c->cfg.stages, (unsigned)c->cfg.inner, (unsigned)c->cfg.cluster, ms, first);
    int fd = open(cache.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    ssize_t w = -1;
    if (fd >= 0) {
        w = write(fd, line, (size_t)n);
        if (close(fd) != 0)
            w = -1;
    }
    if (w != n && !cache.warned_write) {
        cache.warned_write = 1;
        fprintf(stderr, "cuda: cannot append to the cuBLASLt cache %s (%s): choices are kept for "
                        "this process only\n", cache.path, strerror(errno));
    }
}

/* Each candidate's time a product, in ms (FLT_MAX for one cuBLASLt
 * refuses); 0, or -1 with the failure recorded. */
static int time_candidates(cublasLtHandle_t h, struct lt_plan *p, const struct lt_call *call,
                           const cublasLtMatmulHeuristicResult_t *cand, int n, double *ms,
                           const char *op)
{
    const void *C = call->C;
    void *D = call->D, *copy = NULL;
    if (call->C == call->D && call->beta != 0) {
        size_t bytes = ((size_t)p->s.ldc * (p->s.n - 1) + p->s.m) * (p->s.c32 ? 4 : 2);
        if (!(copy = cuda_malloc_tracked(bytes, op))) {
            cuda_fail(__FILE__, __LINE__, op, "out of device memory for timing cuBLASLt's algorithms");
            return -1;
        }
        CUDA_CHECK(op, cudaMemcpyAsync(copy, D, bytes, cudaMemcpyDeviceToDevice, call->stream));
        C = D = copy;
    }
    cudaEvent_t ev[2] = {};
    cudaError_t e = cudaEventCreate(&ev[0]);
    if (e == cudaSuccess)
        e = cudaEventCreate(&ev[1]);
    auto product = [&](int i) {
        return lt.Matmul(h, p->desc, &call->alpha, call->A, p->a, call->B, p->b, &call->beta, C,
                         p->c, D, p->c, &cand[i].algo, call->workspace, LT_WORKSPACE_BYTES,
                         call->stream);
    };
    for (int i = 0; i < n; i++)
        ms[i] = e == cudaSuccess && product(i) == CUBLAS_STATUS_SUCCESS ? DBL_MAX / 2 : FLT_MAX;
    for (int r = 0; r < ROUNDS && e == cudaSuccess; r++)
        for (int i = 0; i < n && e == cudaSuccess; i++) {
            if (ms[i] == FLT_MAX)
                continue;
            e = cudaEventRecord(ev[0], call->stream);
            for (int k = 0; k < REPS && e == cudaSuccess; k++)
                if (product(i) != CUBLAS_STATUS_SUCCESS)
                    e = cudaErrorUnknown;
            float t = 0;
            if (e == cudaSuccess)
                e = cudaEventRecord(ev[1], call->stream);
            if (e == cudaSuccess)
                e = cudaEventSynchronize(ev[1]);
            if (e == cudaSuccess)
                e = cudaEventElapsedTime(&t, ev[0], ev[1]);
            if (e == cudaSuccess && t / REPS < ms[i])
                ms[i] = t / REPS;
        }
    for (int i = 0; i < 2; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    if (copy)
        cuda_free_tracked(copy);
    if (e != cudaSuccess) {
        cuda_fail(__FILE__, __LINE__, op,
                  e == cudaErrorUnknown ? "a cuBLASLt candidate failed while being timed"
                                        : cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

int lt_choose(cublasLtHandle_t h, struct lt_plan *p, const struct lt_call *call, const char *op)
{
    if (!cache.read)
        read_cache();
    cublasLtMatmulHeuristicResult_t cand[LT_CANDIDATES];
    int n = 0;
    if (cache.forced >= 0) {
        if (lt_candidates(h, p, LT_CANDIDATES, cand, &n, op) != 0)
            return -1;
        if (n > cache.offered)
            cache.offered = n;
        p->algo = cand[cache.forced < n ? cache.forced : n - 1].algo;
        return 0;
    }
    /* untimed: the heuristic's first, as before timing existed */
    if (!cache.tune || cuda_recording()) {
        if (lt_candidates(h, p, 1, cand, &n, op) != 0)
            return -1;
        p->algo = cand[0].algo;
        return 0;
    }
    struct lt_choice c = {};
    c.s = p->s;
    c.version = lt.GetVersion();
    if (device_key(c.device, sizeof c.device, &c.sms) != 0) {
        cuda_fail(__FILE__, __LINE__, op, "cannot read the device's properties");
        return -1;
    }
    const struct lt_choice *known = cached(c.device, c.sms, c.version, &p->s);
    int want = known && known->index >= cache.candidates ? known->index + 1 : cache.candidates;
    if (lt_candidates(h, p, want, cand, &n, op) != 0)
        return -1;
    char shape[200], algo[120];
    lt_shape_text(&p->s, shape, sizeof shape);
    struct lt_config cfg;
    if (known && known->index < n && config_of(&cand[known->index].algo, &cfg) == 0 &&
        memcmp(&cfg, &known->cfg, sizeof cfg) == 0) {
        p->algo = cand[known->index].algo;
        config_text(&cfg, algo, sizeof algo);
        fprintf(stderr, "cuBLASLt: %s %s: candidate %d (%s), from %s\n", op, shape,
                known->index + 1, algo, cache.path);
        return 0;
    }
    int timed = n < cache.candidates ? n : cache.candidates;
    double ms[LT_CANDIDATES];
    if (time_candidates(h, p, call, cand, timed, ms, op) != 0)
        return -1;
    int best = 0;
    for (int i = 1; i < timed; i++)
        if (ms[i] < ms[best])
            best = i;
    if (ms[best] >= FLT_MAX) {
        cuda_fail(__FILE__, __LINE__, op, "cuBLASLt refused every algorithm its heuristic offered");
        return -1;
    }
    p->algo = cand[best].algo;
    c.index = best;
    if (config_of(&p->algo, &c.cfg) != 0) {
        cuda_fail(__FILE__, __LINE__, op, "cannot read the chosen algorithm's configuration");
        return -1;
    }
    config_text(&c.cfg, algo, sizeof algo);
    char first[40] = "refused";
    if (ms[0] < FLT_MAX)
        snprintf(first, sizeof first, "%.4f ms, %.2fx", ms[0], ms[0] / ms[best]);
    fprintf(stderr, "cuBLASLt: %s %s: candidate %d of %d timed (%s): %.4f ms, %.1f TFLOP/s; the "
                    "heuristic's first %s\n",
            op, shape, best + 1, timed, algo, ms[best],
            2.0 * p->s.m * p->s.n * p->s.k / (ms[best] * 1e9), first);
    append(&c, ms[best], ms[0] < FLT_MAX ? ms[0] : -1);
    return 0;
}

void lt_settings_again(int forced)
{
    cache.read = 0;
    cache.forced = forced;
    cache.offered = 0;
}

extern "C" int ops_cuda_matmul_offered(void) { return cache.offered; }
