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
#include "worker/device.h"
#include "trainer/train.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-analyze prune|angular|stats|logits|export DIR [--val SHARDS]\n"
            "                   [--tokens N] [--out DIR] [--device cpu|cuda:N]\n"
            "                   [--seq-len T] [--batch B] [--threads N]\n"
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

/* What a directory holds, made into a model's config. */
struct source {
    int hf;                     /* a Hugging Face folder, else a cod checkpoint */
    struct job_spec spec;
    struct hf_config h;
    struct model_config mc;
    const char *val;
    char what[256];
};

static int open_source(const char *dir, struct source *src, const char *val, int T, int B,
                       int *max_B, char *err, size_t errlen)
{
    char path[4400];
    memset(src, 0, sizeof(*src));
    if (path_fmt(path, sizeof(path), err, errlen, "%s/state.json", dir))
        return -1;
    if (access(path, F_OK) == 0) {
        if (checkpoint_read_spec(dir, NULL, &src->spec, err, errlen))
            return -1;
        struct job_spec *s = &src->spec;
        if (T)
            s->train.seq_len = T;
        src->mc = train_model_config(s);
        src->mc.forward_only = 1;
        *max_B = B ? B : s->train.micro_batch;
        src->val = val ? val : s->val_glob;
        snprintf(src->what, sizeof src->what, "norm %s", s->norm.name);
        return 0;
    }
    if (path_fmt(path, sizeof(path), err, errlen, "%s/config.json", dir))
        return -1;
    if (access(path, F_OK) != 0) {
        snprintf(err, errlen, "%s: neither a cod checkpoint (no state.json) nor a Hugging Face "
                              "model folder (no config.json)", dir);
        return -1;
    }
    src->hf = 1;
    if (hf_config_read(dir, &src->h, err, errlen))
        return -1;
    if (!val) {
        snprintf(err, errlen, "%s is a Hugging Face model folder: --val names its held-out "
                              "shards (cod-prep --tokenizer hf with the model's tokenizer.json)",
                 dir);
        return -1;
    }
    if (!T)
        T = src->h.max_pos && src->h.max_pos < 2048 ? src->h.max_pos : 2048;
    if (hf_config_check_seq_len(&src->h, T, err, errlen))
        return -1;
    hf_model_config(&src->h, T, &src->mc);
    *max_B = B ? B : (8192 + T - 1) / T;
    src->val = val;
    snprintf(src->what, sizeof src->what, "%s%s%s%s", src->h.arch,
             src->h.n_kv_heads != src->h.n_heads ? ", grouped-query" : "",
             src->h.tied ? ", tied embeddings" : "", src->h.llama3_rope ? ", llama3 RoPE" : "");
    return 0;
}

/* A row set (common/rowset.h): a fine-tuning run's RUN/sft/val.rows, its
 * held-out records as it evaluates them (only their responses' tokens are
 * targets). */
static int rows_file(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && !strcmp(path + n - 5, ".rows");
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The memory the model asked of the backend, weights apart from the rest. */
static void print_memory(const struct model *m, const char *device)
{
    const struct ops *o = m->ops;
    double mib = 1 << 20;
    double weights = (double)m->n_real * sizeof(real) +
                     (o->act_is_real ? 0 : (double)m->n_params * o->act_bytes);
    printf("model: %.2f M parameters; on %s %.1f MiB: weights %.1f MiB (%s), activations "
           "%.1f MiB for %d × %d tokens\n",
           (double)m->n_weights / 1e6, device, (double)m->bytes / mib, weights / mib,
           o->act_is_real ? (sizeof(real) == 4 ? "fp32" : "fp64") : "bf16",
           ((double)m->bytes - weights) / mib, m->max_B, m->cfg.seq_len);
}

/* prune, angular, stats or logits: the model over held-out shards. */
static int analyse(const char *cmd, const char *dir, const struct ops *ops, const char *device,
                   const char *val, int T, int B, long long tokens, const char *out)
{
    char err[8192];
    struct source src;
    struct model m;
    memset(&m, 0, sizeof(m));
    struct loader v;
    memset(&v, 0, sizeof(v));
    int max_B = 0, rc = EXIT_USAGE;
    if (open_source(dir, &src, val, T, B, &max_B, err, sizeof(err)))
        goto out;
    rc = EXIT_FAILED;
    if (model_create(&m, ops, &src.mc, max_B, err, sizeof(err)))
        goto out;
    print_memory(&m, device);
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
    double t0 = seconds();
    long long passes = 1, seen = 0;
    if (!strcmp(cmd, "logits")) {
        if (logits(&m, &v, tokens, out, err, sizeof(err)))
            goto out;
        seen = (tokens + T - 1) / T * T;
    } else if (!strcmp(cmd, "prune")) {
        struct prune_result r;
        if (prune_run(&m, &v, tokens, &r, err, sizeof(err)))
            goto out;
        print_prune(&r);
        seen = r.tokens;
        passes = r.n_layers + 1;
        int bad = out && write_json(prune_to_json(&r), out, "prune.json", err, sizeof(err));
        prune_free(&r);
        if (bad)
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
    double dt = seconds() - t0;
    printf("%s: %lld tokens × %lld forward pass%s in %.2f s: %.0f tokens/s\n", cmd, seen, passes,
           passes == 1 ? "" : "es", dt, dt > 0 ? (double)(seen * passes) / dt : 0);
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        fprintf(stderr, "cod-analyze: %s\n", err);
    loader_close(&v);
    if (m.ops)
        model_destroy(&m);
    hf_config_free(&src.h);
    return rc;
}

static int positive(const char *flag, const char *s, long long *out)
{
    char *end;
    *out = strtoll(s, &end, 10);
    if (*end || *out <= 0 || *out > 1 << 30) {
        fprintf(stderr, "cod-analyze: %s %s: expected a positive integer\n", flag, s);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = NULL, *dir = NULL, *val = NULL, *out = NULL, *device = "cpu";
    long long tokens = 0, T = 0, B = 0;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--val") && more)
            val = argv[++i];
        else if (!strcmp(a, "--out") && more)
            out = argv[++i];
        else if (!strcmp(a, "--device") && more)
            device = argv[++i];
        else if (!strcmp(a, "--tokens") && more) {
            if (positive(a, argv[++i], &tokens))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--seq-len") && more) {
            if (positive(a, argv[++i], &T))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--batch") && more) {
            if (positive(a, argv[++i], &B))
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
    static const char *const cmds[] = {"prune", "angular", "stats", "logits", "export"};
    int known = 0;
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        known |= !strcmp(cmd, cmds[k]);
    if (!known) {
        fprintf(stderr,
                "cod-analyze: unknown analysis '%s' (expected prune, angular, stats, logits or "
                "export)\n",
                cmd);
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
    if (!tokens)
        tokens = !strcmp(cmd, "prune") ? 262144 : !strcmp(cmd, "logits") ? 1 : 65536;
    return analyse(cmd, dir, ops, device, val, (int)T, (int)B, tokens, out);
}
