/* The evaluation's speed on the CPU (eval/, bench/RESULTS.md): a task's
 * items/s and input tokens/s against the model's own forward tokens/s
 * (model_forward over full rows, the loss at every position) in the same
 * process, the same model and batch; and layer pruning with the prefix of
 * the full forward reused against the L + 1 full forwards it replaces,
 * for the held-out loss (prune_run) and for the task's accuracy
 * (eval_score with each block removed, against each block skipped in
 * turn). Random weights of the given shape: throughput does not depend on
 * them. The rates alternate and each keeps its best round, so a neighbour
 * holding the cores for a while moves both alike or neither.
 * usage: bench_eval TASK.jsonl VAL_SHARDS [DIM LAYERS HEADS FFN SEQ BATCH] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/load_average.h"
#include "eval/score.h"
#include "eval/task.h"
#include "trainer/dataloader.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/rng.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { ROUNDS = 3 };

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 9) {
        fprintf(stderr, "usage: bench_eval TASK.jsonl VAL_SHARDS [DIM LAYERS HEADS FFN SEQ BATCH]\n");
        return 2;
    }
    int shape[6] = {128, 12, 4, 352, 128, 32};
    for (int i = 0; argc == 9 && i < 6; i++)
        shape[i] = atoi(argv[3 + i]);
    int T = shape[4], B = shape[5];
    struct model_config c = {.dim = shape[0], .n_layers = shape[1], .n_heads = shape[2],
                             .ffn_dim = shape[3], .vocab = 257, .seq_len = T,
                             .rope_theta = 10000, .norm_eps = 1e-6, .embed_std = 0.02,
                             .forward_only = 0};
    variant_preset("lns", &c.norm);
    char err[1024];
    struct model m;
    struct tokenizer *bytes = tokenizer_open("bytes", NULL, 0, err, sizeof err);
    if (!bytes || model_create(&m, &ops_cpu, &c, B, err, sizeof err) ||
        model_init_weights(&m, 1, err, sizeof err)) {
        fprintf(stderr, "bench_eval: %s\n", err);
        return 1;
    }
    printf("model dim %d, %d layers, %d heads, ffn %d, vocab 257 (bytes), rows of %d, batch %d "
           "(%d tokens); load average %.1f\n",
           c.dim, c.n_layers, c.n_heads, c.ffn_dim, T, B, B * T, load_average());
    struct eval_encoding e = {bytes, 1, 256, T};
    struct eval_task_opts o = {.file = argv[1], .seed = 1234};
    struct eval_task task;
    double t0 = now();
    if (eval_task_load(&task, &o, &e, stderr, err, sizeof err)) {
        fprintf(stderr, "bench_eval: %s\n", err);
        return 1;
    }
    double load_s = now() - t0;
    int32_t *tok = malloc((size_t)B * T * sizeof(int32_t)), *tgt = malloc((size_t)B * T * 4);
    struct rng r;
    rng_seed(&r, 5, 5);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)(rng_next(&r) % 256);
        tgt[i] = (int32_t)(rng_next(&r) % 256);
    }
    double fwd = 0, items = 0, toks = 0;
    struct eval_speed sp = {0};
    for (int round = 0; round < ROUNDS; round++) {
        /* about as many tokens as the evaluation's inputs */
        int passes = 0;
        t0 = now();
        do {
            model_forward(&m, tok, tgt, B, 0);
            passes++;
        } while ((double)passes * B * T < (sp.tokens ? sp.tokens : 200000));
        fwd = fmax(fwd, (double)passes * B * T / (now() - t0));
        if (eval_score(&m, &task, 1, 0, &sp, err, sizeof err)) {
            fprintf(stderr, "bench_eval: %s\n", err);
            return 1;
        }
        if (sp.tokens / sp.seconds > toks) {
            toks = sp.tokens / sp.seconds;
            items = task.n / sp.seconds;
        }
    }
    printf("task %s: %d items, %lld rows of %lld tokens (%lld with padding, %.1f %%), read and "
           "encoded in %.2f s\n",
           task.name, task.n, sp.rows, sp.tokens, sp.padded,
           100.0 * (double)(sp.padded - sp.tokens) / (double)sp.padded, load_s);
    printf("forward (model_forward, the loss at every position): %.0f tokens/s\n", fwd);
    printf("eval: %.1f items/s, %.0f tokens/s: %.1f %% of the forward's (best of %d rounds "
           "each)\n",
           items, toks, 100 * toks / fwd, ROUNDS);

    struct loader v;
    if (loader_open(&v, argv[2], T, 0, NULL, err, sizeof err)) {
        fprintf(stderr, "bench_eval: %s\n", err);
        return 1;
    }
    double best[2] = {1e30, 1e30}, loss[2][64];
    long long tokens = 16384;
    for (int round = 0; round < 2; round++)
        for (int path = 0; path < 2; path++) {
            struct prune_result p;
            t0 = now();
            if (prune_run(&m, &v, tokens, path ? PRUNE_RECOMPUTE : PRUNE_REUSE, &p, err,
                          sizeof err)) {
                fprintf(stderr, "bench_eval: %s\n", err);
                return 1;
            }
            best[path] = fmin(best[path], now() - t0);
            for (int l = 0; l <= c.n_layers && l < 64; l++)
                loss[path][l] = p.loss[l];
            prune_free(&p);
        }
    int same = !memcmp(loss[0], loss[1], (size_t)(c.n_layers + 1) * sizeof(double));
    printf("prune (loss, %lld tokens, %d removals): prefix reused %.2f s, recomputed %.2f s: "
           "%.2fx faster, %.1f %% of the time (%.1f %% expected: (L/2 + 1.5)/(L + 1)); numbers "
           "%s\n",
           tokens, c.n_layers, best[0], best[1], best[1] / best[0], 100 * best[0] / best[1],
           100 * (c.n_layers / 2.0 + 1.5) / (c.n_layers + 1), same ? "equal" : "DIFFER");
    /* the task's accuracy with each block removed: reused, and each block
     * skipped in turn over the whole task */
    struct eval_speed ps;
    t0 = now();
    eval_score(&m, &task, 1, 1, &ps, err, sizeof err);
    double reused = now() - t0;
    unsigned char *skip = calloc((size_t)c.n_layers, 1);
    t0 = now();
    eval_score(&m, &task, 1, 0, &sp, err, sizeof err);
    for (int l = 1; l <= c.n_layers; l++) {
        skip[l - 1] = 1;
        m.skip = skip;
        eval_score(&m, &task, 1, 0, &sp, err, sizeof err);
        m.skip = NULL;
        skip[l - 1] = 0;
    }
    double recomputed = now() - t0;
    printf("prune --task (accuracy, %d items, %d removals): prefix reused %.2f s, recomputed "
           "%.2f s: %.2fx faster\n",
           task.n, c.n_layers, reused, recomputed, recomputed / reused);
    free(skip);
    free(tok);
    free(tgt);
    loader_close(&v);
    eval_task_free(&task);
    model_destroy(&m);
    tokenizer_close(bytes);
    return same ? 0 : 1;
}
