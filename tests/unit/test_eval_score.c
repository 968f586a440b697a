/* The evaluation on a model (eval/score.c over trainer/model_score.c): each
 * choice's log-likelihood is the sum of its tokens' log-probabilities as
 * the model's own forward computes them on that row alone, whatever the
 * batch it was packed into, its padding and a context cut to the model's
 * length; a constant predictor scores exactly the share of items whose
 * gold is its choice; the accuracy with each block removed, the prefix
 * reused, is that of the model whose removed block is the identity. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/score.h"
#include "eval/task.h"
#include "kernels/ops.h"
#include "spec/variant.h"
#include "tests/check.h"
#include "text/tokenizer.h"
#include "trainer/model.h"
#include "trainer/rng.h"

enum { T = 48, MAX_B = 3, V = 257 };

static struct tokenizer *bytes;
static char path[64];

static int build(struct model *m, const char *norm, int L)
{
    struct model_config c = {.dim = 32, .n_layers = L, .n_heads = 2, .ffn_dim = 64, .vocab = V,
                             .seq_len = T, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = 0.5};
    char err[256];
    variant_preset(norm, &c.norm);
    if (model_create(m, &ops_cpu, &c, MAX_B, err, sizeof err) ||
        model_init_weights(m, 7, err, sizeof err)) {
        CHECK(0, "%s", err);
        return -1;
    }
    return 0;
}

/* A task of random items: contexts of 0 to 60 characters (some longer than
 * the model, cut at their start), 2 to 4 choices of 1 to 9 characters. */
static void write_task(int items, int equal_lengths)
{
    struct rng r;
    rng_seed(&r, 3, 4);
    FILE *f = fopen(path, "w");
    for (int i = 0; f && i < items; i++) {
        int n = 2 + (int)(rng_next(&r) % 3), clen = (int)(rng_next(&r) % 61);
        fprintf(f, "{\"context\":\"");
        for (int j = 0; j < clen; j++)
            fputc('a' + (int)(rng_next(&r) % 26), f);
        fprintf(f, "\",\"choices\":[");
        for (int k = 0; k < n; k++) {
            int len = equal_lengths ? 1 : 1 + (int)(rng_next(&r) % 9);
            fprintf(f, "%s\"", k ? "," : "");
            for (int j = 0; j < len; j++)
                fputc('a' + (int)(rng_next(&r) % 26), f);
            fputc('"', f);
        }
        fprintf(f, "],\"gold\":%d}\n", (int)(rng_next(&r) % (uint64_t)n));
    }
    CHECK(f && fclose(f) == 0, "%s", path);
}

static int load(struct eval_task *t, int bos)
{
    struct eval_encoding e = {bytes, bos, 256, T};
    struct eval_task_opts o = {.file = path, .seed = 1234};
    char err[512];
    if (eval_task_load(t, &o, &e, stderr, err, sizeof err)) {
        CHECK(0, "%s", err);
        return -1;
    }
    return 0;
}

/* -Σ of the per-token losses of the continuation, on its row alone */
static double direct(struct model *m, const struct eval_item *it, int k)
{
    int32_t tok[T], tgt[T];
    int nctx = it->n_ctx[k], ncont = it->n_cont[k], total = nctx + ncont;
    int drop = total > T + 1 ? total - T - 1 : 0, len = total - drop - 1;
    for (int j = 0; j < T; j++) {
        int at = drop + j;
        tok[j] = j < len ? (at < nctx ? it->ctx_tok[k][at] : it->cont_tok[k][at - nctx]) : 0;
        int next = at + 1;
        tgt[j] = j < len && next >= nctx ? it->cont_tok[k][next - nctx] : -1;
    }
    return -model_forward(m, tok, tgt, 1, 0);
}

static void loglik_is_the_forward_s(void)
{
    struct model m;
    struct eval_task t;
    write_task(24, 0);
    if (build(&m, "lns", 2))
        return;
    if (load(&t, 1)) {
        model_destroy(&m);
        return;
    }
    char err[512];
    struct eval_speed sp;
    CHECK(!eval_score(&m, &t, 1, 0, &sp, err, sizeof err), "%s", err);
    CHECK(sp.batches > 1 && sp.rows > t.n, "%lld rows in %lld batches", sp.rows, sp.batches);
    double worst = 0;
    int cut = 0;
    for (int i = 0; i < t.n; i++)
        for (int k = 0; k < t.items[i].n; k++) {
            double want = direct(&m, &t.items[i], k), got = t.ll[t.choice_at[i] + k];
            worst = fmax(worst, fabs(got - want) / fmax(1, fabs(want)));
            cut += t.items[i].n_ctx[k] + t.items[i].n_cont[k] > T + 1;
        }
    CHECK(worst < 2e-5, "the largest relative difference %.3g", worst);
    CHECK(cut > 0, "some inputs were longer than the model (cut at their start)");
    eval_task_free(&t);
    model_destroy(&m);
}

/* Logits all zero (the final norm's gain zero): every continuation of one
 * token count scores alike, the tie goes to choice 0. */
static void constant_predictor_scores_the_share(void)
{
    struct model m;
    struct eval_task t;
    write_task(60, 1);
    if (build(&m, "pre", 2))
        return;
    const struct param_info *g = model_param(&m, m.cfg.n_layers + 1, P_FINAL_NORM);
    memset(m.params + g->offset, 0, g->span * sizeof(real));
    if (load(&t, 0)) {
        model_destroy(&m);
        return;
    }
    char err[512];
    CHECK(!eval_score(&m, &t, 1, 0, NULL, err, sizeof err), "%s", err);
    int first = 0;
    for (int i = 0; i < t.n; i++)
        first += t.items[i].gold == 0;
    struct eval_metrics r;
    eval_metrics(&t, 0, &r);
    CHECK(r.acc == (double)first / t.n && r.acc_norm == r.acc,
          "acc %.17g, acc_norm %.17g, the share of gold 0 %d/%d", r.acc, r.acc_norm, first, t.n);
    CHECK(first > 0 && first < t.n, "the share is neither 0 nor 1 (%d/%d)", first, t.n);
    eval_task_free(&t);
    model_destroy(&m);
}

/* Each block removed, the prefix before it reused, against the model run
 * whole with that block the identity (model.skip), for every item. */
static void prune_equals_the_model_without_the_block(void)
{
    static const char *const norms[] = {"lns", "post", "sandwich"};
    write_task(16, 0);
    for (size_t v = 0; v < sizeof norms / sizeof norms[0]; v++) {
        struct model m;
        struct eval_task t, u;
        if (build(&m, norms[v], 3))
            return;
        if (load(&t, 1) || load(&u, 1)) {
            model_destroy(&m);
            return;
        }
        char err[512];
        CHECK(!eval_score(&m, &t, 1, 1, NULL, err, sizeof err), "%s", err);
        CHECK(t.configs == 4, "%d configurations", t.configs);
        unsigned char skip[3] = {0};
        int differs = 0;
        for (int l = 1; l <= 3 && t.configs == 4; l++) {
            skip[l - 1] = 1;
            m.skip = skip;
            CHECK(!eval_score(&m, &u, 1, 0, NULL, err, sizeof err), "%s", err);
            m.skip = NULL;
            skip[l - 1] = 0;
            int same = !memcmp(t.ll + (size_t)l * t.choices, u.ll, (size_t)t.choices * sizeof(double));
            CHECK(same, "%s: block %d: reused and recomputed differ", norms[v], l);
            differs |= memcmp(t.ll, u.ll, (size_t)t.choices * sizeof(double)) != 0;
        }
        CHECK(differs, "%s: removing a block changed no log-likelihood", norms[v]);
        eval_task_free(&t);
        eval_task_free(&u);
        model_destroy(&m);
    }
}

int main(void)
{
    char err[512];
    bytes = tokenizer_open("bytes", NULL, 0, err, sizeof err);
    snprintf(path, sizeof path, "/tmp/cod-eval-score-%d.jsonl", (int)getpid());
    if (!bytes) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    RUN(loglik_is_the_forward_s);
    RUN(constant_predictor_scores_the_share);
    RUN(prune_equals_the_model_without_the_block);
    unlink(path);
    tokenizer_close(bytes);
    CHECK_EXIT();
}
