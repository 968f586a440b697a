/* CPU training throughput: tokens/s and achieved FLOP/s of full training
 * updates (forward, backward, Adam) of a preset shape at seq 256, beside the
 * cblas_sgemm FLOP/s of this machine measured in the same process, and the
 * process's peak memory. Tokens are random ids: throughput does not depend
 * on the text. usage: bench_train DIM LAYERS HEADS FFN VOCAB MICRO_BATCH STEPS
 * The ratio is given twice: the mean update against the best sgemm window,
 * and the best update against it, which like the sgemm figure is what the
 * code does when no neighbour holds the cores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <cblas.h>

#include "trainer/model.h"
#include "trainer/rng.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* sgemm at the shapes the model's matmuls have (the rows are the
 * micro-batch's tokens), weighted by each shape's share of a step's FLOPs.
 * Each shape keeps its best of three 0.3 s windows: the ratio is taken
 * against the fastest this machine showed, never a slow moment. */
static double sgemm_flops(int N, int d, int f, int V)
{
    int shapes[3][2] = {{d, d}, {d, f}, {d, V}};
    double best_total = 0;
    for (int s = 0; s < 3; s++) {
        int K = shapes[s][0], M = shapes[s][1];
        float *a = calloc((size_t)N * K, 4), *b = calloc((size_t)M * K, 4), *c = calloc((size_t)N * M, 4);
        if (!a || !b || !c) {
            free(a); free(b); free(c);
            return NAN;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, M, K, 1, a, K, b, K, 0, c, M);
        double fl = 0;
        for (int w = 0; w < 3; w++) {
            double t0 = now();
            int it = 0;
            while (now() - t0 < 0.3) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, M, K, 1, a, K, b, K, 0, c, M);
                it++;
            }
            double rate = 2.0 * N * M * K * it / (now() - t0);
            fl = rate > fl ? rate : fl;
        }
        printf("  sgemm %5d x %5d x %5d: %.1f GFLOP/s\n", N, M, K, fl / 1e9);
        /* weight the shapes as a training step does: by their FLOPs */
        best_total += fl * (s == 0 ? 4.0 * d * d : s == 1 ? 3.0 * d * f : 1.0 * d * V);
        free(a); free(b); free(c);
    }
    return best_total / (4.0 * d * d + 3.0 * d * f + 1.0 * d * V);
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: bench_train DIM LAYERS HEADS FFN VOCAB MICRO_BATCH STEPS\n");
        return 2;
    }
    struct model_config c = {.dim = atoi(argv[1]), .n_layers = atoi(argv[2]), .n_heads = atoi(argv[3]),
                             .ffn_dim = atoi(argv[4]), .vocab = atoi(argv[5]), .seq_len = 256,
                             .rope_theta = 10000, .norm_eps = 1e-6, .embed_std = 0.02};
    int B = atoi(argv[6]), steps = atoi(argv[7]);
    variant_preset("lns", &c.norm);
    struct model m;
    char err[512];
    if (model_create(&m, &ops_cpu, &c, B, err, sizeof(err)) ||
        model_init_weights(&m, 1, err, sizeof(err))) {
        fprintf(stderr, "bench_train: %s\n", err);
        return 1;
    }
    real *am = ops_cpu.alloc(m.n_params), *av = ops_cpu.alloc(m.n_params);
    int N = B * c.seq_len;
    int32_t *tok = malloc((size_t)N * 4), *tgt = malloc((size_t)N * 4);
    if (!am || !av || !tok || !tgt) {
        fprintf(stderr, "bench_train: out of memory\n");
        return 1;
    }
    struct rng r;
    rng_seed(&r, 1, 1);
    for (int i = 0; i < N; i++) {
        tok[i] = (int32_t)(rng_next(&r) % c.vocab);
        tgt[i] = (int32_t)(rng_next(&r) % c.vocab);
    }
    printf("sgemm before training:\n");
    double sg_before = sgemm_flops(N, c.dim, c.ffn_dim, c.vocab);
    double t0 = 0, best = INFINITY;
    for (int s = -1; s < steps; s++) { /* step -1 warms caches and page-faults the buffers in */
        double ts = now();
        if (s == 0)
            t0 = ts;
        ops_cpu.zero(m.grads, m.n_params);
        model_forward(&m, tok, tgt, B, (real)(1.0 / N));
        model_backward(&m);
        ops_cpu.adam(m.params, m.wact, m.grads, am, av, m.n_params, 1e-3f, 0.9f, 0.999f, 1e-8f, 0,
                     s + 2, 0, NULL);
        if (s >= 0 && now() - ts < best)
            best = now() - ts;
    }
    double dt = now() - t0, tps = (double)N * steps / dt;
    double achieved = tps * model_flops_per_token(&m), best_achieved = N / best * model_flops_per_token(&m);
    printf("model dim %d layers %d heads %d ffn %d vocab %d: %.2fM params, micro-batch %d x 256\n",
           c.dim, c.n_layers, c.n_heads, c.ffn_dim, c.vocab, m.n_weights / 1e6, B);
    printf("sgemm after training:\n");
    double sg = sgemm_flops(N, c.dim, c.ffn_dim, c.vocab);
    sg = sg > sg_before ? sg : sg_before;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("RESULT tokens_per_s=%.0f achieved_gflops=%.1f sgemm_gflops=%.1f ratio=%.3f best_tokens_per_s=%.0f "
           "best_ratio=%.3f peak_rss_mib=%.0f\n",
           tps, achieved / 1e9, sg / 1e9, achieved / sg, N / best, best_achieved / sg, ru.ru_maxrss / 1024.0);
    free(tok);
    free(tgt);
    ops_cpu.free(am);
    ops_cpu.free(av);
    model_destroy(&m);
    return 0;
}
