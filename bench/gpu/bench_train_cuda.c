/* CUDA training throughput: tokens/s, MFU and device memory of full
 * training updates (forward, backward, AdamW with the gradient-norm clip)
 * of a preset with LayerNorm Scaling at seq 256 and vocab 32000 on cuda:0
 * (or of a job spec given as JSON: its model, norm, seq_len and vocab),
 * with the largest micro-batch that fits (halving from 128) unless one is
 * given. Tokens are random ids: throughput does not depend on the text.
 * MFU is against the dense bf16 peak given in TFLOP/s (989 for H100 SXM and
 * H200), with the FLOPs of model_flops_per_token. Peak memory is every
 * byte the backend allocated (ops_cuda_memory), the CUDA context aside, as
 * PyTorch's max_memory_allocated counts its own. The timed steps, not the
 * warm-ups, are what a profiler started with profiling off records
 * (bench/gpu/profile.sh). ACCUM micro-batches make one update (default 1,
 * the optimizer's worst case; the paper's batch of 512 sequences is
 * 512 / MICRO_BATCH), as the trainer accumulates them; STEPS counts updates.
 * usage: bench_train_cuda PRESET|SPEC_JSON PEAK_TFLOPS [MICRO_BATCH] [STEPS] [ACCUM] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops_cuda.h"
#include "spec/spec.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/train.h"

enum { PRESET_SEQ = 256, PRESET_VOCAB = 32000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the model and its Adam state at micro-batch B, or -1 (out of memory) */
static int create(struct model *m, real **am, real **av, const struct model_config *c, int B,
                  char *err, size_t errlen)
{
    if (model_create(m, &ops_cuda, c, B, err, errlen) != 0)
        return -1;
    *am = ops_cuda.alloc(m->n_params);
    *av = ops_cuda.alloc(m->n_params);
    if (*am && *av)
        return 0;
    snprintf(err, errlen, "out of memory for the Adam state at micro-batch %d", B);
    ops_cuda.free(*am);
    ops_cuda.free(*av);
    model_destroy(m);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 6) {
        fprintf(stderr, "usage: bench_train_cuda PRESET|SPEC_JSON PEAK_TFLOPS [MICRO_BATCH] [STEPS] "
                        "[ACCUM]\n");
        return 2;
    }
    double peak_flops = atof(argv[2]) * 1e12;
    int fixed_B = argc > 3 ? atoi(argv[3]) : 0, steps = argc > 4 ? atoi(argv[4]) : 10;
    int accum = argc > 5 ? atoi(argv[5]) : 1;
    if (steps < 1 || accum < 1) {
        fprintf(stderr, "bench_train_cuda: STEPS and ACCUM must be positive integers\n");
        return 2;
    }
    char err[1024], text[1024];
    int json = argv[1][0] == '{';
    snprintf(text, sizeof text, json ? "%s" : "{\"model\": \"%s\", \"norm\": \"lns\"}", argv[1]);
    struct job_spec s;
    struct spec_error se;
    if (spec_parse(text, strlen(text), &s, &se) != 0) {
        fprintf(stderr, "bench_train_cuda: %s: %s\n", se.field, se.message);
        return 2;
    }
    const int seq = json ? s.train.seq_len : PRESET_SEQ;
    const int vocab = json ? s.model.vocab : PRESET_VOCAB;
    if (vocab < 2) {
        /* a spec takes its vocabulary from its data, which the benchmark has not */
        fprintf(stderr, "bench_train_cuda: model.vocab: the spec must give the vocabulary's size\n");
        return 2;
    }
    const char *name = json ? s.name : argv[1];
    if (cuda_probe(0, err, sizeof err) != 0) {
        fprintf(stderr, "bench_train_cuda: %s\n", err);
        return 1;
    }
    printf("%s\n", err);
    struct model_config c = train_model_config(&s);
    c.vocab = vocab;
    c.seq_len = seq;
    struct model m;
    real *am = NULL, *av = NULL;
    int B = fixed_B > 0 ? fixed_B : 128;
    while (create(&m, &am, &av, &c, B, err, sizeof err) != 0) {
        if (fixed_B > 0 || B == 1) {
            fprintf(stderr, "bench_train_cuda: %s\n", err);
            return 1;
        }
        B /= 2;
    }
    ops_cuda_reset_peak(); /* the attempts that did not fit are gone */
    if (model_init_weights(&m, 1, err, sizeof err) != 0) {
        fprintf(stderr, "bench_train_cuda: %s\n", err);
        return 1;
    }
    int N = B * seq;
    int32_t *tok = malloc((size_t)N * 4), *tgt = malloc((size_t)N * 4);
    if (!tok || !tgt) {
        fprintf(stderr, "bench_train_cuda: out of host memory\n");
        return 1;
    }
    struct rng r;
    rng_seed(&r, 1, 1);
    for (int i = 0; i < N; i++) {
        tok[i] = (int32_t)(rng_next(&r) % vocab);
        tgt[i] = (int32_t)(rng_next(&r) % vocab);
    }
    double t0 = 0, loss = 0;
    /* two warm-up steps plan the matmuls, allocate cuBLASLt's workspace and
     * record the micro-batch as a CUDA graph (model_step; COD_CUDA_GRAPHS=0
     * runs it op by op); the update's summed loss and the gradient norm
     * (device-to-host copies) make each update wait for the GPU, as a
     * training run's do */
    const double count = (double)N * accum;
    for (int step = -2; step < steps; step++) {
        if (step == 0) {
            ops_cuda_profile_report(NULL); /* drops the warm-up's marks */
            ops_cuda_profile_range(1);
            t0 = now();
        }
        ops_cuda.zero(m.grads, m.n_params);
        for (int k = 0; k < accum; k++)
            model_step(&m, tok, tgt, B, (real)(1.0 / count));
        loss = model_losses_take(&m) / count;
        ops_cuda.adam(m.params, m.wact, m.grads, am, av, m.n_params, 1e-3f, 0.9f, 0.999f, 1e-8f,
                      0, step + 3, 1.0, NULL);
    }
    double dt = now() - t0;
    ops_cuda_profile_range(0);
    ops_cuda_profile_report(stdout);
    size_t used = 0, peak = 0;
    ops_cuda_memory(&used, &peak);
    if (ops_cuda.error(err, sizeof err) != 0 || !isfinite(loss)) {
        fprintf(stderr, "bench_train_cuda: %s\n", isfinite(loss) ? err : "non-finite loss");
        return 1;
    }
    double tps = count * steps / dt, flops = tps * model_flops_per_token(&m);
    printf("RESULT impl=cod model=%s micro_batch=%d accum=%d params_m=%.1f tokens_per_s=%.0f "
           "tflops=%.1f mfu=%.4f peak_gib=%.2f loss=%.4f graph=%d logit_rows=%d keep_swiglu=%d "
           "wgrad_beside=%d\n",
           name, B, accum, m.n_weights / 1e6, tps, flops / 1e12, flops / peak_flops,
           peak / 1073741824.0, loss, m.rec.replays >= (long)steps * accum, m.mem.logit_rows,
           m.mem.keep_swiglu, m.mem.beside);
    printf("memory: %s\n", m.mem.said);
    const char *attention = m.ops->attention_choice ? m.ops->attention_choice() : NULL;
    if (attention)
        printf("attention: %s\n", attention);
    if (m.rec.off)
        fprintf(stderr, "bench_train_cuda: op by op: %s\n", m.rec.why);
    free(tok);
    free(tgt);
    ops_cuda.free(am);
    ops_cuda.free(av);
    model_destroy(&m);
    return 0;
}
