/* cod-analyze's analyses over held-out tokens: see heldout.h. */
#include "analyze/heldout.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analyze/source.h"
#include "common/fileio.h"
#include "trainer/angular.h"
#include "trainer/dataloader.h"
#include "trainer/hf_load.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/stats.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

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

int analyze_heldout(const char *cmd, const char *dir, const struct ops *ops, const char *device,
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
