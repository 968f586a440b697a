/* cod-analyze: the paper's analyses on any checkpoint, cod's own or a
 * Hugging Face model folder (Llama 2 and 3, Mistral, Qwen2:
 * trainer/hf_config.h), without a server: layer pruning ΔP(ℓ)
 * (trainer/prune.h), the angular distance matrix (trainer/angular.h), the
 * per-layer statistics of the residual stream (trainer/stats.h), the
 * logits, and export of a cod checkpoint to a Hugging Face LLaMA folder
 * (trainer/export_hf.h). The model runs forward only (no gradients, no
 * optimizer state), in bf16 on CUDA. Prints text tables and heat maps;
 * --out writes prune.json / angular.json / stats.json, or the export
 * folder. Sending the results to the server as metrics belongs to
 * cod-worker, which runs the same analyses at the end of a job through
 * trainer/train.c. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/fileio.h"
#include "common/path.h"
#include "kernels/ops.h"
#include "spec/spec.h"
#include "trainer/angular.h"
#include "trainer/checkpoint.h"
#include "trainer/dataloader.h"
#include "trainer/export_hf.h"
#include "trainer/hf_config.h"
#include "trainer/hf_load.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/stats.h"
#include "worker/analyze_eval.h"
#include "worker/analyze_source.h"
#include "worker/device.h"
#include "trainer/train.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-analyze prune|angular|stats|logits|export DIR [--val SHARDS]\n"
            "                   [--tokens N] [--out DIR] [--device cpu|cuda:N]\n"
            "                   [--seq-len T] [--batch B] [--threads N]\n"
            "       cod-analyze eval DIR --task FILE[:LAYOUT] [--fewshot-from FILE] ...\n"
            "                   [--shots K] [--limit N] [--seed S] [--bos auto|yes|no]\n"
            "                   [--strict] [--tokenizer FILE] [--tokenizer-dir DIR] [options above]\n"
            "       cod-analyze prune DIR --task FILE... (the same task options)\n"
            "       cod-analyze cloze TEXT... --out FILE.jsonl [--items N] [--choices K]\n"
            "                   [--seed S]\n"
            "DIR is a cod checkpoint (state.json, model.safetensors) or a Hugging Face model\n"
            "folder (config.json of LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM;\n"
            "model.safetensors or the shards of model.safetensors.index.json).\n"
            "  prune     held-out loss and perplexity with each block removed in turn, as\n"
            "            prune/delta_loss and prune/delta_ppl per layer (paper's ΔP(l))\n"
            "  angular   angular distance d(l, n) between the input of block l and that of\n"
            "            block l+n, averaged over every token, and its row-scaled form\n"
            "  stats     per layer: out_var and out_rms of the residual stream, and the\n"
            "            angular distance each block moves it (paper's Figure 1)\n"
            "  logits    the model's logits on the first held-out sequences, fp32, as a NumPy\n"
            "            file [sequences, seq_len, vocab] in --out (for checking an export)\n"
            "  export    a cod checkpoint as a Hugging Face LLaMA folder (config.json,\n"
            "            model.safetensors) in --out; refused for variants stock LLaMA\n"
            "            cannot express\n"
            "  eval      multiple-choice tasks scored as lm-evaluation-harness v0.4.12 scores\n"
            "            them (docs/eval.md): acc, acc_norm and their standard errors; --out\n"
            "            writes eval.json and samples_TASK.jsonl; prune --task adds each\n"
            "            task's accuracy with each block removed (prune_tasks.json)\n"
            "  cloze     a task (generic layout) from held-out text: a passage's true next\n"
            "            sentence among sentences of other documents\n"
            "  --task FILE[:LAYOUT]  JSON lines (.gz, .zst, .xz) of a task, its layout taken\n"
            "                from its fields unless named (mmlu, arc_easy, arc_challenge,\n"
            "                hellaswag, piqa, boolq, winogrande, social_iqa, openbookqa,\n"
            "                commonsense, generic); repeatable\n"
            "  --fewshot-from FILE  the few-shot split of the --task before it (default:\n"
            "                the task's own file, an item never its own example; MMLU: its dev)\n"
            "  --shots K     examples before each item (default 0); --seed S their draw\n"
            "                (default 1234, the harness's); --limit N the first N items\n"
            "  --bos P       the doc token before every context: auto (a checkpoint's data's\n"
            "                doc token where documents start with it; a Hugging Face\n"
            "                tokenizer's own), yes or no\n"
            "  --strict      a bad line fails rather than being reported and skipped\n"
            "  --tokenizer F, --tokenizer-dir D  a checkpoint's data's tokenizer files, where\n"
            "                meta.json's are not beside the shards or in var/cache/tokenizers\n"
            "  --val SHARDS  held-out token shards (glob), tokenized with the model's own\n"
            "                tokenizer; default: a checkpoint spec's data.val (a Hugging Face\n"
            "                folder needs it); or FILE.rows, a row set (a fine-tuning run's\n"
            "                RUN/sft/val.rows: its targets only the responses' tokens)\n"
            "  --tokens N    held-out tokens (default 262144 for prune, 65536 for angular and\n"
            "                stats, one sequence's for logits)\n"
            "  --out DIR     write prune.json / angular.json / stats.json there (export: the\n"
            "                folder; logits: the .npy file)\n"
            "  --device D    cpu (fp32) or cuda:N (bf16); default cpu\n"
            "  --seq-len T   tokens a sequence (default: a checkpoint's train.seq_len; a\n"
            "                Hugging Face model's max_position_embeddings, at most 2048)\n"
            "  --batch B     sequences a forward pass (default: a checkpoint's\n"
            "                train.micro_batch; else 8192 tokens' worth)\n"
            "exit status: 0 done, 1 failed, 2 bad usage or bad checkpoint\n");
}

/* Writes DIR/NAME and says where. */
static int write_json(json_t *j, const char *dir, const char *name, char *err, size_t errlen)
{
    if (fio_write_json(j, dir, name, err, errlen))
        return -1;
    printf("wrote %s/%s\n", dir, name);
    return 0;
}

static void print_prune(const struct prune_result *r)
{
    int L = r->n_layers;
    double top = 0;
    for (int l = 1; l <= L; l++)
        top = fmax(top, prune_delta_loss(r, l));
    printf("full model: loss %.4f  ppl %.3f  over %lld tokens\n\n", r->base_loss, r->base_ppl,
           (long long)r->tokens);
    printf("%5s  %10s  %10s  %10s  %11s  %s\n", "layer", "loss w/o", "ppl w/o", "delta_loss",
           "delta_ppl", "delta_loss");
    for (int l = 1; l <= L; l++) {
        double dl = prune_delta_loss(r, l);
        int bar = top > 0 && dl > 0 ? (int)lround(40 * dl / top) : 0;
        printf("%5d  %10.4f  %10.3f  %+10.4f  %+11.3f  ", l, r->loss[l], r->ppl[l], dl,
               prune_delta_ppl(r, l));
        for (int k = 0; k < bar; k++)
            putchar('#');
        printf("%s\n", dl < 0 ? "(<0)" : "");
    }
}

static void print_angular(const struct angular_result *r)
{
    static const char shades[] = " .:-=+*#%@";
    int L = r->n_layers;
    printf("angular distance over %lld tokens; heat map of each row scaled to [0, 1]\n"
           "(' ' lowest … '@' highest), rows l = block, columns n = 1…L-l+1\n\n",
           (long long)r->tokens);
    printf("  l\\n ");
    for (int n = 1; n <= L; n++)
        printf("%d", n % 10);
    printf("\n");
    for (int l = 1; l <= L; l++) {
        printf("%4d  ", l);
        for (int n = 1; l + n - 1 <= L; n++) {
            double v = angular_scaled(r, l, n);
            putchar(isfinite(v) ? shades[(int)lround(v * 9)] : '?');
        }
        printf("\n");
    }
    printf("\nd(l, n), raw:\n  l\\n");
    for (int n = 1; n <= L; n++)
        printf(" %6d", n);
    printf("\n");
    for (int l = 1; l <= L; l++) {
        printf("%4d", l);
        for (int n = 1; l + n - 1 <= L; n++)
            printf(" %6.4f", angular_at(r, l, n));
        printf("\n");
    }
}

static void print_stats(const struct layer_stats *s, int64_t tokens)
{
    int L = s->n_layers;
    double top = 0;
    for (int l = 0; l <= L; l++)
        top = fmax(top, s->out_var[l]);
    printf("per-layer statistics over %lld tokens (layer 0: the embedding output;\n"
           "angular: the distance block l moves the stream, arccos(cos)/pi)\n\n",
           (long long)tokens);
    printf("%5s  %12s  %12s  %8s  %s\n", "layer", "out_var", "out_rms", "angular", "out_var");
    for (int l = 0; l <= L; l++) {
        int bar = top > 0 && isfinite(s->out_var[l]) ? (int)lround(40 * s->out_var[l] / top) : 0;
        printf("%5d  %12.6g  %12.6g  ", l, s->out_var[l], s->out_rms[l]);
        if (l)
            printf("%8.4f  ", s->angular[l]);
        else
            printf("%8s  ", "");
        for (int k = 0; k < bar; k++)
            putchar('#');
        putchar('\n');
    }
}

/* A NumPy .npy file (format 1.0) of float32 [a, b, c]. */
static int write_npy(const char *path, const real *x, long long a, long long b, long long c,
                     char *err, size_t errlen)
{
    char header[128];
    int n = snprintf(header, sizeof(header),
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld, %lld), }", a,
                     b, c);
    int total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, length, dict, '\n' */
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((total - 10) & 0xff),
                             (unsigned char)((total - 10) >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(header, 1, (size_t)n, f) != (size_t)n;
    for (int i = 10 + n; !bad && i < total - 1; i++)
        bad = fputc(' ', f) == EOF;
    bad = bad || fputc('\n', f) == EOF;
    size_t count = (size_t)(a * b * c);
    if (!bad && sizeof(real) == sizeof(float))
        bad = fwrite(x, sizeof(float), count, f) != count;
    for (size_t i = 0; !bad && sizeof(real) != sizeof(float) && i < count; i++) {
        float v = (float)x[i];
        bad = fwrite(&v, sizeof v, 1, f) != 1;
    }
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The logits of the first held-out sequences into a .npy file. */
static int logits(struct model *m, const struct loader *v, long long tokens, const char *out,
                  char *err, size_t errlen)
{
    int T = m->cfg.seq_len, V = m->cfg.vocab;
    long long seqs = loader_rows_for(v, tokens);
    real *all = malloc((size_t)seqs * T * V * sizeof(real));
    int32_t *tok = malloc((size_t)m->max_B * T * sizeof(int32_t)),
            *tgt = malloc((size_t)m->max_B * T * sizeof(int32_t));
    int rc = -1;
    if (!all || !tok || !tgt) {
        snprintf(err, errlen, "out of memory for the logits of %lld sequences of %d × %d", seqs,
                 T, V);
        goto out;
    }
    for (long long s0 = 0; s0 < seqs; s0 += m->max_B) {
        int B = (int)(seqs - s0 < m->max_B ? seqs - s0 : m->max_B);
        loader_rows(v, s0, B, tok, tgt);
        model_logits(m, tok, tgt, B, all + (size_t)s0 * T * V);
    }
    if (write_npy(out, all, seqs, T, V, err, errlen) == 0) {
        printf("wrote %s: logits of %lld sequences of %d tokens, vocabulary %d\n", out, seqs, T,
               V);
        rc = 0;
    }
out:
    free(all);
    free(tok);
    free(tgt);
    return rc;
}

/* A row set (common/rowset.h): a fine-tuning run's RUN/sft/val.rows, its
 * held-out records as it evaluates them (only their responses' tokens are
 * targets). */
static int rows_file(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && !strcmp(path + n - 5, ".rows");
}

/* prune, angular, stats or logits: the model over held-out shards. */
static int analyse(const char *cmd, const char *dir, const struct ops *ops, const char *device,
                   const char *val, int T, int B, long long tokens, const char *out,
                   const struct analyze_tasks *at)
{
    char err[8192];
    struct source src;
    struct model m;
    memset(&m, 0, sizeof(m));
    struct loader v;
    memset(&v, 0, sizeof(v));
    struct eval_task *tasks = NULL;
    int max_B = 0, rc = EXIT_USAGE, n_tasks = 0;
    if (analyze_open_source(dir, &src, val, 1, T, B, &max_B, err, sizeof(err)))
        goto out;
    rc = EXIT_FAILED;
    if ((at->n && analyze_tasks_load(at, dir, &src, src.mc.seq_len, &tasks, &n_tasks, err,
                                     sizeof err)) ||
        model_create(&m, ops, &src.mc, max_B, err, sizeof(err)))
        goto out;
    analyze_print_memory(&m, device);
    if (hf_load_weights(dir, &m, err, sizeof(err)))
        goto out;
    T = src.mc.seq_len;
    /* a checkpoint's held-out rows as its run packed them (documents: whole
     * documents, pads not counted) */
    if (rows_file(src.val) ? loader_open_rows(&v, src.val, T, 0, 0, err, sizeof(err))
        : src.hf           ? loader_open(&v, src.val, T, 0, NULL, err, sizeof(err))
                           : loader_open_spec(&v, &src.spec, src.val, "--val", err, sizeof(err)))
        goto out;
    if (loader_max_token(&v) >= (uint32_t)src.mc.vocab) {
        snprintf(err, sizeof(err), "%s: token %u is outside the model's vocabulary of %d",
                 src.val, loader_max_token(&v), src.mc.vocab);
        goto out;
    }
    printf("%s: %s (%s), %d layers, dim %d; held-out %s, sequences of %d\n", cmd, dir, src.what,
           src.mc.n_layers, src.mc.dim, src.val, T);
    fflush(stdout);
    double t0 = analyze_seconds();
    long long passes = 1, seen = 0;
    if (!strcmp(cmd, "logits")) {
        if (logits(&m, &v, tokens, out, err, sizeof(err)))
            goto out;
        seen = (tokens + T - 1) / T * T;
    } else if (!strcmp(cmd, "prune")) {
        struct prune_result r;
        if (prune_run(&m, &v, tokens, PRUNE_REUSE, &r, err, sizeof(err)))
            goto out;
        print_prune(&r);
        seen = r.tokens;
        passes = r.n_layers + 1;
        int bad = out && write_json(prune_to_json(&r), out, "prune.json", err, sizeof(err));
        prune_free(&r);
        if (bad || (n_tasks && analyze_prune_tasks(&m, tasks, n_tasks, out, err, sizeof err)))
            goto out;
    } else if (!strcmp(cmd, "angular")) {
        struct angular_result r;
        if (angular_run(&m, &v, tokens, &r, err, sizeof(err)))
            goto out;
        print_angular(&r);
        seen = r.tokens;
        int bad = out && write_json(angular_to_json(&r), out, "angular.json", err, sizeof(err));
        angular_free(&r);
        if (bad)
            goto out;
    } else {
        struct layer_stats s;
        int64_t n = 0;
        if (stats_alloc(&s, src.mc.n_layers)) {
            snprintf(err, sizeof(err), "out of memory");
            goto out;
        }
        int bad = stats_heldout(&m, &v, tokens, &s, &n, err, sizeof(err));
        if (!bad)
            print_stats(&s, n);
        bad = bad || (out && write_json(stats_to_json(&s, n), out, "stats.json", err,
                                        sizeof(err)));
        stats_free(&s);
        seen = n;
        if (bad)
            goto out;
    }
    if (ops->error(err, sizeof(err)))
        goto out;
    double dt = analyze_seconds() - t0;
    printf("%s: %lld tokens × %lld forward pass%s in %.2f s: %.0f tokens/s\n", cmd, seen, passes,
           passes == 1 ? "" : "es", dt, dt > 0 ? (double)(seen * passes) / dt : 0);
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        fprintf(stderr, "cod-analyze: %s\n", err);
    loader_close(&v);
    eval_tasks_free(tasks, n_tasks);
    if (m.ops)
        model_destroy(&m);
    hf_config_free(&src.h);
    return rc;
}


/* The options of the tasks (--task and what goes with it): 1 when a is
 * one (its value taken), 0 when not, -1 on a bad value. */
static int task_option(struct analyze_tasks *t, const char *a, char **argv, int argc, int *i)
{
    if (*i + 1 >= argc)
        return 0;
    const char *v = argv[*i + 1];
    long long n;
    if (!strcmp(a, "--task")) {
        if (t->n == ANALYZE_MAX_TASKS) {
            fprintf(stderr, "cod-analyze: at most %d --task\n", ANALYZE_MAX_TASKS);
            return -1;
        }
        t->task[t->n++] = v;
    } else if (!strcmp(a, "--fewshot-from")) {
        if (!t->n) {
            fprintf(stderr, "cod-analyze: --fewshot-from names the few-shot split of the --task "
                            "before it\n");
            return -1;
        }
        t->fewshot[t->n - 1] = v;
    } else if (!strcmp(a, "--shots")) {
        char *end;
        long k = strtol(v, &end, 10);
        if (*end || k < 0 || k > 1000) {
            fprintf(stderr, "cod-analyze: --shots %s: expected 0 to 1000\n", v);
            return -1;
        }
        t->shots = (int)k;
    } else if (!strcmp(a, "--limit")) {
        if (analyze_positive(a, v, &n))
            return -1;
        t->limit = (long)n;
    } else if (!strcmp(a, "--seed")) {
        char *end;
        t->seed = strtoull(v, &end, 10);
        if (*end || !*v || *v == '-') {
            fprintf(stderr, "cod-analyze: --seed %s: expected a non-negative integer\n", v);
            return -1;
        }
    } else if (!strcmp(a, "--bos")) {
        if (strcmp(v, "auto") && strcmp(v, "yes") && strcmp(v, "no")) {
            fprintf(stderr, "cod-analyze: --bos %s: expected auto, yes or no\n", v);
            return -1;
        }
        t->bos = v;
    } else if (!strcmp(a, "--tokenizer")) {
        t->tokenizer = v;
    } else if (!strcmp(a, "--tokenizer-dir")) {
        t->tokenizer_dir = v;
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

int main(int argc, char **argv)
{
    const char *cmd = NULL, *dir = NULL, *val = NULL, *out = NULL, *device = "cpu";
    long long tokens = 0, T = 0, B = 0;
    int threads = 0, strict = 0;
    struct analyze_tasks at = {.seed = 1234, .bos = "auto"};
    if (argc > 1 && !strcmp(argv[1], "cloze"))
        return analyze_cloze(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc, took = task_option(&at, a, argv, argc, &i);
        if (took < 0)
            return EXIT_USAGE;
        if (took)
            continue;
        if (!strcmp(a, "--strict"))
            strict = 1;
        else if (!strcmp(a, "--val") && more)
            val = argv[++i];
        else if (!strcmp(a, "--out") && more)
            out = argv[++i];
        else if (!strcmp(a, "--device") && more)
            device = argv[++i];
        else if (!strcmp(a, "--tokens") && more) {
            if (analyze_positive(a, argv[++i], &tokens))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--seq-len") && more) {
            if (analyze_positive(a, argv[++i], &T))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--batch") && more) {
            if (analyze_positive(a, argv[++i], &B))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--threads") && more)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return EXIT_OK;
        } else if (a[0] != '-' && !cmd)
            cmd = a;
        else if (a[0] != '-' && !dir)
            dir = a;
        else {
            fprintf(stderr, "cod-analyze: unexpected argument '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!cmd || !dir) {
        usage(stderr);
        return EXIT_USAGE;
    }
    static const char *const cmds[] = {"prune", "angular", "stats", "logits", "export", "eval"};
    int known = 0;
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        known |= !strcmp(cmd, cmds[k]);
    if (!known) {
        fprintf(stderr,
                "cod-analyze: unknown analysis '%s' (expected prune, angular, stats, logits, "
                "export, eval or cloze)\n",
                cmd);
        return EXIT_USAGE;
    }
    at.strict = strict;
    if (!strcmp(cmd, "eval") && !at.n) {
        fprintf(stderr, "cod-analyze: eval needs --task FILE (one or more)\n");
        return EXIT_USAGE;
    }
    if (at.n && strcmp(cmd, "eval") && strcmp(cmd, "prune")) {
        fprintf(stderr, "cod-analyze: --task goes with eval and prune, not %s\n", cmd);
        return EXIT_USAGE;
    }
    if ((!strcmp(cmd, "export") || !strcmp(cmd, "logits")) && !out) {
        fprintf(stderr, "cod-analyze: %s needs --out %s\n", cmd,
                !strcmp(cmd, "export") ? "DIR for the Hugging Face folder" : "FILE.npy");
        return EXIT_USAGE;
    }
    if (threads > 0)
        omp_set_num_threads(threads);
    char err[8192];
    if (!strcmp(cmd, "export")) {
        struct job_spec s;
        if (checkpoint_read_spec(dir, NULL, &s, err, sizeof(err))) {
            fprintf(stderr, "cod-analyze: %s\n", err);
            return EXIT_USAGE;
        }
        if (export_hf(dir, &s, out, err, sizeof(err))) {
            fprintf(stderr, "cod-analyze: %s\n", err);
            return EXIT_FAILED;
        }
        printf("exported %s (norm %s) to %s/{config.json,model.safetensors}\n", dir, s.norm.name,
               out);
        return EXIT_OK;
    }
    const struct ops *ops;
    if (device_backend(device, &ops, err, sizeof(err))) {
        fprintf(stderr, "cod-analyze: %s\n", err);
        return EXIT_USAGE;
    }
    if (!strcmp(cmd, "eval"))
        return analyze_eval(dir, ops, device, (int)T, (int)B, &at, out);
    if (!tokens)
        tokens = !strcmp(cmd, "prune") ? 262144 : !strcmp(cmd, "logits") ? 1 : 65536;
    return analyse(cmd, dir, ops, device, val, (int)T, (int)B, tokens, out, &at);
}
