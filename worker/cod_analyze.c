/* cod-analyze: the paper's analyses on any checkpoint, without a server:
 * layer pruning ΔP(ℓ) (trainer/prune.h), the angular distance matrix
 * (trainer/angular.h), and export to a Hugging Face LLaMA folder
 * (trainer/export_hf.h). Prints text tables and heat maps; --out writes
 * prune.json / angular.json, or the export folder. Sending the results to
 * the server as metrics belongs to cod-worker, which runs the same analyses
 * at the end of a job through trainer/train.c. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/fileio.h"
#include "kernels/ops.h"
#include "spec/spec.h"
#include "trainer/angular.h"
#include "trainer/checkpoint.h"
#include "trainer/dataloader.h"
#include "trainer/export_hf.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/train.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-analyze prune|angular|export|logits CHECKPOINT_DIR [--val SHARDS]\n"
            "                   [--tokens N]\n"
            "                   [--out DIR] [--threads N]\n"
            "  prune     held-out loss and perplexity with each block removed in turn, as\n"
            "            prune/delta_loss and prune/delta_ppl per layer (paper's ΔP(l))\n"
            "  angular   angular distance d(l, n) between the input of block l and that of\n"
            "            block l+n, averaged over every token, and its row-scaled form\n"
            "  export    a Hugging Face LLaMA folder (config.json, model.safetensors) in --out;\n"
            "            refused for variants stock LLaMA cannot express\n"
            "  logits    the model's logits on the first held-out sequences, fp32, as a NumPy\n"
            "            file [sequences, seq_len, vocab] in --out (for checking an export)\n"
            "  --val SHARDS  validation shards (glob); default: the checkpoint spec's data.val\n"
            "  --tokens N    held-out tokens (default 262144 for prune, 65536 for angular,\n"
            "                one sequence's for logits)\n"
            "  --out DIR     write prune.json / angular.json there (export: the folder;\n"
            "                logits: the .npy file)\n"
            "exit status: 0 done, 1 failed, 2 bad usage or bad checkpoint\n");
}

/* The spec a checkpoint was trained with, from its state.json. */
static int load_spec(const char *ckpt, struct job_spec *s, char *err, size_t errlen)
{
    struct train_state st;
    json_t *spec;
    if (checkpoint_read_state(ckpt, &st, &spec, err, errlen))
        return -1;
    struct spec_error se = {"", "out of memory"};
    int rc = 0;
    if (spec_upgrade(spec) || spec_from_json(spec, s, &se)) {
        snprintf(err, errlen, "%s/state.json: spec: %s: %s", ckpt, se.field, se.message);
        rc = -1;
    } else if (s->model.vocab <= 0) {
        snprintf(err, errlen, "%s/state.json: the spec does not record the vocabulary size", ckpt);
        rc = -1;
    }
    json_decref(spec);
    return rc;
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
        for (int b = 0; b < B; b++)
            loader_chunk(v, s0 + b, tok + (size_t)b * T, tgt + (size_t)b * T);
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

/* prune, angular or logits: the checkpoint's model over held-out shards. */
static int analyse(const char *cmd, const char *ckpt, const struct job_spec *s, const char *val,
                   long long tokens, const char *out)
{
    char err[8192];
    struct model m;
    struct loader v;
    memset(&v, 0, sizeof(v));
    struct model_config c = train_model_config(s);
    if (model_create(&m, &ops_cpu, &c, s->train.micro_batch, err, sizeof(err))) {
        fprintf(stderr, "cod-analyze: %s\n", err);
        return EXIT_FAILED;
    }
    int rc = EXIT_USAGE;
    if (checkpoint_load_weights(ckpt, &m, err, sizeof(err)))
        goto out;
    rc = EXIT_FAILED;
    /* held-out rows as the run packed them (documents: whole documents, pads not counted) */
    if (loader_open_spec(&v, s, val, "--val", err, sizeof(err)))
        goto out;
    if (loader_max_token(&v) >= (uint32_t)s->model.vocab) {
        snprintf(err, sizeof(err), "%s: token %u is outside the model's vocabulary of %d", val,
                 loader_max_token(&v), s->model.vocab);
        goto out;
    }
    printf("%s: %s, norm %s, %d layers, dim %d; held-out %s\n", cmd, ckpt, s->norm.name,
           s->model.n_layers, s->model.dim, val);
    if (!strcmp(cmd, "logits")) {
        if (logits(&m, &v, tokens, out, err, sizeof(err)))
            goto out;
    } else if (!strcmp(cmd, "prune")) {
        struct prune_result r;
        if (prune_run(&m, &v, tokens, &r, err, sizeof(err)))
            goto out;
        print_prune(&r);
        int bad = out && write_json(prune_to_json(&r), out, "prune.json", err, sizeof(err));
        prune_free(&r);
        if (bad)
            goto out;
    } else {
        struct angular_result r;
        if (angular_run(&m, &v, tokens, &r, err, sizeof(err)))
            goto out;
        print_angular(&r);
        int bad = out && write_json(angular_to_json(&r), out, "angular.json", err, sizeof(err));
        angular_free(&r);
        if (bad)
            goto out;
    }
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        fprintf(stderr, "cod-analyze: %s\n", err);
    loader_close(&v);
    model_destroy(&m);
    return rc;
}

int main(int argc, char **argv)
{
    const char *cmd = NULL, *ckpt = NULL, *val = NULL, *out = NULL;
    long long tokens = 0;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end;
        if (!strcmp(a, "--val") && i + 1 < argc)
            val = argv[++i];
        else if (!strcmp(a, "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(a, "--tokens") && i + 1 < argc) {
            tokens = strtoll(argv[++i], &end, 10);
            if (*end || tokens <= 0) {
                fprintf(stderr, "cod-analyze: --tokens %s: expected a positive integer\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return EXIT_OK;
        } else if (a[0] != '-' && !cmd)
            cmd = a;
        else if (a[0] != '-' && !ckpt)
            ckpt = a;
        else {
            fprintf(stderr, "cod-analyze: unexpected argument '%s'\n", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!cmd || !ckpt) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "prune") && strcmp(cmd, "angular") && strcmp(cmd, "export") &&
        strcmp(cmd, "logits")) {
        fprintf(stderr,
                "cod-analyze: unknown analysis '%s' (expected prune, angular, export or logits)\n",
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
    struct job_spec s;
    if (load_spec(ckpt, &s, err, sizeof(err))) {
        fprintf(stderr, "cod-analyze: %s\n", err);
        return EXIT_USAGE;
    }
    if (!strcmp(cmd, "export")) {
        if (export_hf(ckpt, &s, out, err, sizeof(err))) {
            fprintf(stderr, "cod-analyze: %s\n", err);
            return EXIT_FAILED;
        }
        printf("exported %s (norm %s) to %s/{config.json,model.safetensors}\n", ckpt, s.norm.name,
               out);
        return EXIT_OK;
    }
    if (!tokens)
        tokens = !strcmp(cmd, "prune") ? 262144 : !strcmp(cmd, "logits") ? 1 : 65536;
    return analyse(cmd, ckpt, &s, val ? val : s.val_glob, tokens, out);
}
