/* The attention alone, at a model's shapes: cod's attention forward and
 * backward (ops_cuda's attention_fwd and attention_bwd, whichever attention
 * the backend runs: COD_ATTENTION, where the build has it, chooses) on
 * cuda:0, timed op by op on the stream (COD_CUDA_PROFILE, set here), so
 * that the attention kernels' own time is told from the rotation of q and
 * k that comes with them. bench/gpu/attention.sh runs it beside PyTorch's
 * SDPA backends at the same shapes (bench/gpu/attention.py).
 *
 * FLOPs of a causal call, as FlashAttention's benchmarks count them: the
 * forward's two products (QKᵀ and PV) over the T²/2 unmasked pairs,
 * 2·B·H·T²·D; the backward's five (the scores recomputed, dV, dP, dQ, dK)
 * 2.5 times that. TFLOP/s are those over the kernels' own time; wall_ms is
 * a forward and a backward, everything in them, host gaps included.
 *
 * Prints per shape the profile of its timed calls (PROFILE lines) and
 *   ATTENTION impl=LABEL model=NAME batch=B heads=H seq=T head=D reps=N
 *             fwd_ms=… bwd_ms=… other_ms=… wall_ms=… fwd_tflops=…
 *             bwd_tflops=… fwdbwd_tflops=…
 * usage: bench_attention_cuda LABEL REPS NAME:B:H:T:D... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops_cuda.h"
#include "trainer/rng.h"

struct shape {
    char name[64];
    int B, H, T, D;
};

/* what one shape's buffers are */
struct bufs {
    act *qkv, *out, *dout, *dqkv;
    real *state, *cos, *sin;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_shape(const char *arg, struct shape *s)
{
    const char *c = strchr(arg, ':');
    if (!c || (size_t)(c - arg) >= sizeof s->name)
        return -1;
    memcpy(s->name, arg, (size_t)(c - arg));
    s->name[c - arg] = 0;
    char tail;
    return sscanf(c + 1, "%d:%d:%d:%d%c", &s->B, &s->H, &s->T, &s->D, &tail) == 4 && s->B > 0 &&
                   s->H > 0 && s->T > 0 && s->D > 1 && s->D % 2 == 0
               ? 0
               : -1;
}

/* n values in [-1, 1), rounded to act */
static int upload_random(act *dst, size_t n, struct rng *r)
{
    real *h = malloc(n * sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < n; i++)
        h[i] = (real)(2 * rng_uniform(r) - 1);
    ops_cuda.upload_act(dst, h, n);
    free(h);
    return 0;
}

static int alloc_bufs(struct bufs *b, const struct shape *s)
{
    size_t N = (size_t)s->B * s->T, d = (size_t)s->H * s->D, h2 = (size_t)s->D / 2;
    b->qkv = ops_cuda.alloc_act(N * 3 * d);
    b->dqkv = ops_cuda.alloc_act(N * 3 * d);
    b->out = ops_cuda.alloc_act(N * d);
    b->dout = ops_cuda.alloc_act(N * d);
    b->state = ops_cuda.alloc(ops_cuda.attn_state_size(s->B, s->T, s->H, s->D));
    b->cos = ops_cuda.alloc((size_t)s->T * h2);
    b->sin = ops_cuda.alloc((size_t)s->T * h2);
    real *cs = malloc(2 * (size_t)s->T * h2 * sizeof *cs);
    if (!b->qkv || !b->dqkv || !b->out || !b->dout || !b->state || !b->cos || !b->sin || !cs) {
        free(cs);
        return -1;
    }
    for (int t = 0; t < s->T; t++)
        for (size_t i = 0; i < h2; i++) {
            double a = t * pow(10000.0, -2.0 * (double)i / s->D);
            cs[(size_t)t * h2 + i] = (real)cos(a);
            cs[((size_t)s->T + t) * h2 + i] = (real)sin(a);
        }
    ops_cuda.upload(b->cos, cs, (size_t)s->T * h2);
    ops_cuda.upload(b->sin, cs + (size_t)s->T * h2, (size_t)s->T * h2);
    free(cs);
    struct rng r;
    rng_seed(&r, 1, 1);
    return upload_random(b->qkv, N * 3 * d, &r) || upload_random(b->dout, N * d, &r) ? -1 : 0;
}

static void free_bufs(struct bufs *b)
{
    void *p[] = {b->qkv, b->dqkv, b->out, b->dout, b->state, b->cos, b->sin};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        ops_cuda.free(p[i]);
}

static void call(const struct bufs *b, const struct shape *s)
{
    ops_cuda.attention_fwd(b->out, b->state, b->qkv, b->cos, b->sin, s->B, s->T, s->H, s->D);
    ops_cuda.attention_bwd(b->dqkv, b->dout, b->out, b->state, b->qkv, b->cos, b->sin, s->B, s->T,
                           s->H, s->D);
}

/* waits for the stream: a reduction's result comes back to the host */
static void sync_device(const struct bufs *b) { (void)ops_cuda.sum(b->cos, 1); }

/* The profile's ms by kind: the attention ops of the forward and of the
 * backward (an op named for attention, or for cuDNN's, "bwd" telling the
 * backward), and the rest but the synchronising reduction (the rotation of
 * q and k, and whatever else the calls launch). The PROFILE lines are
 * echoed to out. */
static int split_profile(const char *text, FILE *out, double *fwd, double *bwd, double *other)
{
    *fwd = *bwd = *other = 0;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[256];
        if (len < sizeof buf) {
            memcpy(buf, line, len);
            buf[len] = 0;
            fprintf(out, "%s\n", buf);
            /* "PROFILE <op, may hold spaces> <ms> <share>% <launches>" */
            char *p = strrchr(buf, '%');
            double ms;
            if (strncmp(buf, "PROFILE ", 8) == 0 && p) {
                while (p > buf && p[-1] != ' ')
                    p--;
                while (p > buf && p[-1] == ' ')
                    p--;
                *p = 0;
                char *num = strrchr(buf, ' ');
                if (num && sscanf(num, "%lf", &ms) == 1) {
                    *num = 0;
                    const char *op = buf + 8;
                    if (strstr(op, "attention") || strstr(op, "cudnn"))
                        *(strstr(op, "bwd") ? bwd : fwd) += ms;
                    else if (strcmp(op, "sum") != 0)
                        *other += ms;
                }
            }
        }
        line += len + (end != NULL);
    }
    return *fwd > 0 && *bwd > 0 ? 0 : -1;
}

static int bench(const char *label, int reps, const struct shape *s)
{
    struct bufs b = {0};
    if (alloc_bufs(&b, s) != 0) {
        fprintf(stderr, "bench_attention_cuda: %s: out of memory\n", s->name);
        free_bufs(&b);
        return -1;
    }
    /* the first calls choose the attention, build cuDNN's graphs, plan */
    for (int i = 0; i < 3; i++)
        call(&b, s);
    ops_cuda_profile_report(NULL);
    /* its mark starts the first timed op's interval */
    sync_device(&b);
    double t0 = now();
    for (int i = 0; i < reps; i++)
        call(&b, s);
    sync_device(&b);
    double wall = (now() - t0) / reps * 1e3;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        free_bufs(&b);
        return -1;
    }
    ops_cuda_profile_report(mem);
    fclose(mem);
    char err[512];
    double fwd, bwd, other;
    int split = split_profile(text, stdout, &fwd, &bwd, &other);
    free(text);
    free_bufs(&b);
    if (ops_cuda.error(err, sizeof err) != 0) {
        fprintf(stderr, "bench_attention_cuda: %s: %s\n", s->name, err);
        return -1;
    }
    if (split != 0) {
        fprintf(stderr, "bench_attention_cuda: %s: the profile names no attention op of both "
                        "the forward and the backward\n", s->name);
        return -1;
    }
    fwd /= reps;
    bwd /= reps;
    other /= reps;
    double flops = 2.0 * s->B * s->H * (double)s->T * s->T * s->D; /* the forward's */
    printf("ATTENTION impl=%s model=%s batch=%d heads=%d seq=%d head=%d reps=%d fwd_ms=%.4f "
           "bwd_ms=%.4f other_ms=%.4f wall_ms=%.4f fwd_tflops=%.4g bwd_tflops=%.4g "
           "fwdbwd_tflops=%.4g\n",
           label, s->name, s->B, s->H, s->T, s->D, reps, fwd, bwd, other, wall,
           flops / fwd / 1e9, 2.5 * flops / bwd / 1e9, 3.5 * flops / (fwd + bwd) / 1e9);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_attention_cuda LABEL REPS NAME:B:H:T:D...\n");
        return 2;
    }
    int reps = atoi(argv[2]);
    if (reps < 1) {
        fprintf(stderr, "bench_attention_cuda: REPS must be a positive integer, not '%s'\n", argv[2]);
        return 2;
    }
    int n = argc - 3;
    struct shape *shapes = calloc((size_t)n, sizeof *shapes);
    if (!shapes)
        return 1;
    for (int i = 0; i < n; i++)
        if (parse_shape(argv[i + 3], &shapes[i]) != 0) {
            fprintf(stderr, "bench_attention_cuda: a shape is NAME:B:H:T:D with an even D, not '%s'\n",
                    argv[i + 3]);
            free(shapes);
            return 2;
        }
    /* every launch followed by an event, read before the profile's first use */
    setenv("COD_CUDA_PROFILE", "1", 1);
    char err[1024];
    if (cuda_probe(0, err, sizeof err) != 0) {
        fprintf(stderr, "bench_attention_cuda: %s\n", err);
        free(shapes);
        return 1;
    }
    printf("%s\n", err);
    int status = 0;
    for (int i = 0; i < n && status == 0; i++)
        status = bench(argv[1], reps, &shapes[i]) ? 1 : 0;
    free(shapes);
    return status;
}
