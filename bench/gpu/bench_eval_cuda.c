/* The evaluation at a pretrained model's size on cuda:0: a Llama-2-7B
 * shaped model (bf16, forward only, random weights: the speed does not
 * depend on them) over an MMLU-shaped 5-shot task (bench/gpu/mmlu_synth.py:
 * 14,042 items of 57 subjects, each with its subject's 5 dev examples
 * before it), read, rendered and encoded by eval/ (the llama tokenizer) and
 * scored by eval_score as cod-analyze eval scores it. The items go in
 * interleaved chunks (item i in chunk i % CHUNKS), each a sample of the
 * whole, timed one after another until the next would pass the budget:
 * the seconds the whole would take are the chunks' seconds over their
 * share of the task's input tokens. The first chunk also sets up the
 * matmuls' plans and the attention's graphs; its time is given apart.
 * usage: bench_eval_cuda TASK.jsonl DEV.jsonl TOKENIZER_DIR BUDGET_S BATCH_TOKENS
 *                        [DIM LAYERS HEADS FFN VOCAB SEQ [PEAK_TFLOPS]] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval/score.h"
#include "eval/task.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops_cuda.h"
#include "spec/variant.h"
#include "text/tokenizer.h"
#include "trainer/model.h"
#include "trainer/rng.h"

enum { CHUNKS = 16, PATTERN = 1 << 22 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Random weights of a forward-only model on the device: the matrices
 * N(0, 0.02) (a pattern of PATTERN values, repeated), the norms' gains 1. */
static int random_weights(struct model *m, char *err, size_t errlen)
{
    const struct ops *o = m->ops;
    real *pat = malloc((size_t)PATTERN * sizeof(real)), *ones = NULL;
    if (!pat) {
        snprintf(err, errlen, "out of host memory");
        return -1;
    }
    struct rng r;
    rng_seed(&r, 7, 7);
    for (int i = 0; i < PATTERN; i++)
        pat[i] = (real)(0.02 * rng_normal(&r));
    int rc = 0;
    for (int t = 0; !rc && t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        if (p->ndim == 2) {
            for (size_t at = 0; at < p->span; at += PATTERN) {
                size_t n = p->span - at < PATTERN ? p->span - at : PATTERN;
                o->upload_act(act_at(o, m->wact, p->offset + at), pat, n);
            }
            continue;
        }
        free(ones);
        ones = malloc(p->span * sizeof(real));
        if (!ones) {
            snprintf(err, errlen, "out of host memory");
            rc = -1;
            break;
        }
        for (size_t i = 0; i < p->span; i++)
            ones[i] = 1;
        o->upload(m->params + m->roff[(size_t)p->layer * P_KIND_COUNT + p->kind], ones, p->span);
    }
    free(ones);
    free(pat);
    return rc || o->error(err, errlen) ? -1 : 0;
}

/* The items i ≡ k (mod CHUNKS) as a task of their own (sharing the items'
 * memory), and its input tokens (one row an item: MMLU's choices share it). */
static long long chunk_of(const struct eval_task *all, int k, struct eval_task *c, int seq)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", all->name);
    c->layout = all->layout;
    c->items = malloc(((size_t)all->n / CHUNKS + 1) * sizeof *c->items);
    c->choice_at = malloc(((size_t)all->n / CHUNKS + 1) * sizeof(long));
    long long tokens = 0;
    for (int i = k; c->items && c->choice_at && i < all->n; i += CHUNKS) {
        const struct eval_item *it = &all->items[i];
        c->items[c->n] = *it;
        c->choice_at[c->n++] = c->choices;
        c->choices += it->n;
        long long len = it->n_ctx[0] + it->n_cont[0] - 1;
        tokens += len < seq ? len : seq;
    }
    return tokens;
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 12 && argc != 13) {
        fprintf(stderr, "usage: bench_eval_cuda TASK.jsonl DEV.jsonl TOKENIZER_DIR BUDGET_S "
                        "BATCH_TOKENS [DIM LAYERS HEADS FFN VOCAB SEQ [PEAK_TFLOPS]]\n");
        return 2;
    }
    double budget = atof(argv[4]), peak = argc == 13 ? atof(argv[12]) : 989;
    long batch_tokens = atol(argv[5]);
    int shape[6] = {4096, 32, 32, 11008, 32000, 4096};
    for (int i = 0; argc >= 12 && i < 6; i++)
        shape[i] = atoi(argv[6 + i]);
    int seq = shape[5];
    char err[1024];
    if (cuda_probe(0, err, sizeof err) != 0) {
        fprintf(stderr, "bench_eval_cuda: %s\n", err);
        return 1;
    }
    printf("%s\n", err);
    struct tokenizer *tok = tokenizer_open("llama", argv[3], 0, err, sizeof err);
    if (!tok) {
        fprintf(stderr, "bench_eval_cuda: %s\n", err);
        return 1;
    }
    struct model_config c = {.dim = shape[0], .n_layers = shape[1], .n_heads = shape[2],
                             .ffn_dim = shape[3], .vocab = shape[4], .seq_len = seq,
                             .rope_theta = 10000, .norm_eps = 1e-5, .forward_only = 1};
    variant_preset("pre", &c.norm);
    struct model m;
    int max_B = (int)(batch_tokens / seq > 0 ? batch_tokens / seq : 1);
    double t0 = now();
    if (model_create(&m, &ops_cuda, &c, max_B, err, sizeof err) ||
        random_weights(&m, err, sizeof err)) {
        fprintf(stderr, "bench_eval_cuda: %s\n", err);
        return 1;
    }
    size_t mem_now, mem_peak;
    ops_cuda_memory(&mem_now, &mem_peak);
    printf("model: %.2f B parameters, bf16, dim %d, %d layers, %d heads, ffn %d, vocab %d, "
           "inputs of at most %d tokens, %ld tokens a forward; %.1f GiB on the device; set up in "
           "%.1f s\n",
           m.n_weights / 1e9, c.dim, c.n_layers, c.n_heads, c.ffn_dim, c.vocab, seq,
           (long)max_B * seq, mem_now / 1073741824.0, now() - t0);
    struct eval_encoding enc = {tok, 1, tokenizer_doc_token(tok), seq};
    struct eval_task_opts o = {.file = argv[1], .layout = "mmlu", .fewshot_from = argv[2],
                               .shots = 5, .seed = 1234};
    struct eval_task task;
    t0 = now();
    if (eval_task_load(&task, &o, &enc, stderr, err, sizeof err)) {
        fprintf(stderr, "bench_eval_cuda: %s\n", err);
        return 1;
    }
    double load_s = now() - t0;
    long long all_tokens = 0;
    struct eval_task chunks[CHUNKS];
    long long chunk_tokens[CHUNKS];
    for (int k = 0; k < CHUNKS; k++)
        all_tokens += chunk_tokens[k] = chunk_of(&task, k, &chunks[k], seq);
    printf("task: %d items, 5-shot, %lld input tokens (%.0f an item), read, rendered and "
           "encoded in %.1f s on the host\n",
           task.n, all_tokens, (double)all_tokens / task.n, load_s);
    fflush(stdout);
    double spent = 0, first = 0, right = 0;
    long long tokens = 0, padded = 0, batches = 0;
    int done = 0, items = 0;
    for (int k = 0; k < CHUNKS; k++) {
        double last = k ? spent / k : 0;
        if (k && spent + last > budget)
            break;
        struct eval_speed sp;
        if (eval_score(&m, &chunks[k], 1, 0, &sp, err, sizeof err)) {
            fprintf(stderr, "bench_eval_cuda: %s\n", err);
            return 1;
        }
        struct eval_metrics r;
        eval_metrics(&chunks[k], 0, &r);
        right += r.acc * r.n;
        items += r.n;
        spent += sp.seconds;
        first = k ? first : sp.seconds;
        tokens += sp.tokens;
        padded += sp.padded;
        batches += sp.batches;
        done++;
        printf("chunk %d: %d items, %lld tokens in %lld forwards, %.1f s\n", k, chunks[k].n,
               sp.tokens, sp.batches, sp.seconds);
        fflush(stdout);
    }
    const char *attention = ops_cuda.attention_choice ? ops_cuda.attention_choice() : NULL;
    double flops_token = 2.0 * (double)(m.n_weights - (size_t)c.vocab * c.dim);
    double whole = spent * (double)all_tokens / (double)tokens;
    ops_cuda_memory(&mem_now, &mem_peak);
    printf("scored %d of %d chunks: %d items, %lld tokens (%lld with padding, %.1f %%) in %lld "
           "forwards, %.1f s (the first chunk %.1f s): %.0f tokens/s, %.1f items/s, %.0f "
           "TFLOP/s of the weights' matmuls (%.0f %% of %.0f); acc %.4f (random weights: "
           "chance 0.25); attention: %s; peak %.1f GiB\n",
           done, CHUNKS, items, tokens, padded, 100.0 * (double)(padded - tokens) / (double)padded,
           batches, spent, first, tokens / spent, items / spent,
           flops_token * tokens / spent / 1e12, 100 * flops_token * tokens / spent / 1e12 / peak,
           peak, right / items, attention ? attention : "none ran", mem_peak / 1073741824.0);
    printf("RESULT items=%d tokens=%lld whole_items=%d whole_tokens=%lld seconds=%.2f "
           "whole_seconds=%.1f%s load_seconds=%.1f target_seconds=300\n",
           items, tokens, task.n, all_tokens, spent, whole, done < CHUNKS ? " (extrapolated)" : "",
           load_s);
    for (int k = 0; k < CHUNKS; k++) {
        free(chunks[k].items);
        free(chunks[k].choice_at);
        free(chunks[k].ll);
    }
    eval_task_free(&task);
    model_destroy(&m);
    tokenizer_close(tok);
    return ops_cuda.error(err, sizeof err) ? 1 : 0;
}
