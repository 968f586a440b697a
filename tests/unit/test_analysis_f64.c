/* Layer pruning and the angular distance matrix in double precision, where
 * the comparisons can be exact: removing block ℓ computes what a model
 * built without it computes, with every remaining block at its original
 * depth ℓ (LNS's 1/√ℓ); removing nothing, or a block that is already the
 * identity, costs nothing; d(ℓ, n) matches a direct computation, and in
 * documents packing, as the per-layer statistics do, over the positions
 * that have a target alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/shard.h"
#include "tests/check.h"
#include "trainer/angular.h"
#include "trainer/eval.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/rng.h"
#include "trainer/stats.h"

enum { D = 16, H = 2, F = 24, V = 11, T = 8, B = 2, SEQS = 5 };

static char dir[] = "/tmp/cod-analysis-XXXXXX";
static char val_glob[600], docs_glob[600];
/* the held-out documents: doc token V-1 before each, lengths of tokens
 * with it; rows take T+1, so the 9s fill theirs and longer ones are cut */
static const int doc_len[] = {3, 12, 5, 9, 2, 20, 4};
enum { N_DOCS = sizeof doc_len / sizeof doc_len[0] };

static int build(struct model *m, const char *preset, int L)
{
    struct model_config c = {.dim = D, .n_layers = L, .n_heads = H, .ffn_dim = F, .vocab = V,
                             .seq_len = T, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = 0.02};
    char err[256];
    variant_preset(preset, &c.norm);
    if (model_create(m, &ops_cpu, &c, B, err, sizeof(err)) ||
        model_init_weights(m, 3, err, sizeof(err))) {
        CHECK(0, "model: %s", err);
        return -1;
    }
    /* gains off 1, so that a block's norms matter to the comparison */
    struct rng r;
    rng_seed(&r, 11, 2);
    for (int t = 0; t < m->n_tensors; t++)
        if (m->info[t].ndim == 1)
            for (size_t i = 0; i < m->info[t].n; i++)
                m->params[param_index(&m->info[t], i)] += 0.3 * rng_normal(&r);
    return 0;
}

/* Copies every tensor of `from` into `to`, block `removed` left out and the
 * later blocks moved up by one. */
static void copy_without(struct model *to, const struct model *from, int removed)
{
    int L = from->cfg.n_layers;
    for (int t = 0; t < from->n_tensors; t++) {
        const struct param_info *p = &from->info[t];
        if (p->layer == removed)
            continue;
        int l = p->layer > removed ? p->layer - 1 : p->layer;
        if (p->layer == L + 1)
            l = L;
        const struct param_info *q = model_param(to, l, p->kind);
        memcpy(to->params + q->offset, from->params + p->offset, p->span * sizeof(real));
    }
}

static int open_val(struct loader *l)
{
    char err[256];
    if (loader_open(l, val_glob, T, 1, NULL, err, sizeof(err))) {
        CHECK(0, "%s", err);
        return -1;
    }
    return 0;
}

/* Pre-LN blocks do not depend on ℓ: removing block ℓ of L must give the
 * loss of the L−1 block model built from the remaining weights. */
static void prune_matches_shorter_model(void)
{
    struct model m, s;
    struct loader val;
    if (build(&m, "pre", 4) || open_val(&val))
        return;
    struct prune_result r;
    char err[256];
    CHECK(!prune_run(&m, &val, SEQS * T, PRUNE_REUSE, &r, err, sizeof(err)), "%s", err);
    CHECK(r.tokens == SEQS * T, "%lld tokens", (long long)r.tokens);
    int32_t tok[B * T], tgt[B * T];
    for (int l = 1; l <= 4; l++) {
        if (build(&s, "pre", 3))
            break;
        copy_without(&s, &m, l);
        struct eval_result e = eval_run(&s, &val, SEQS * T, tok, tgt);
        CHECK(fabs(e.loss - r.loss[l]) < 1e-12, "block %d: pruned %.15f, shorter model %.15f", l,
              r.loss[l], e.loss);
        CHECK(fabs(prune_delta_loss(&r, l)) > 1e-6, "block %d: removing it changed nothing", l);
        CHECK(fabs(exp(r.loss[l]) - r.ppl[l]) < 1e-9, "ppl is exp(loss)");
        model_destroy(&s);
    }
    CHECK(m.skip == NULL, "prune_run leaves no skip behind");
    prune_free(&r);
    loader_close(&val);
    model_destroy(&m);
}

/* LNS: the blocks after a removed one keep their own 1/√ℓ, so the pruned
 * model equals an (L−1)-block model whose scales are those of the original
 * depths, and differs from a plain (L−1)-block LNS model. */
static void prune_lns_keeps_original_scale(void)
{
    struct model m, s;
    if (build(&m, "lns", 4) || build(&s, "lns", 3))
        return;
    int removed = 2;
    copy_without(&s, &m, removed);
    int32_t tok[B * T], tgt[B * T];
    struct rng g;
    rng_seed(&g, 5, 5);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)(rng_next(&g) % V);
        tgt[i] = (int32_t)(rng_next(&g) % V);
    }
    unsigned char skip[4] = {0, 1, 0, 0};
    m.skip = skip;
    double pruned = model_forward(&m, tok, tgt, B, 0);
    m.skip = NULL;
    double renumbered = model_forward(&s, tok, tgt, B, 0);
    for (int l = removed; l <= 3; l++) {
        CHECK(fabs(s.blk[l - 1].s_attn - 1 / sqrt(l)) < 1e-15, "block %d scale", l);
        s.blk[l - 1].s_attn = s.blk[l - 1].s_ffn = 1 / sqrt(l + 1.0);
    }
    double original = model_forward(&s, tok, tgt, B, 0);
    CHECK(fabs(pruned - original) < 1e-12, "pruned %.15f, original scales %.15f", pruned, original);
    CHECK(fabs(pruned - renumbered) > 1e-6, "pruned %.15f equals the renumbered model %.15f",
          pruned, renumbered);
    model_destroy(&s);
    model_destroy(&m);
}

/* No block removed gives the full model's loss; a block that is already
 * the identity (no output projections) costs exactly nothing to remove. */
static void prune_identity_block_costs_nothing(void)
{
    struct model m;
    struct loader val;
    if (build(&m, "pre", 3) || open_val(&val))
        return;
    int32_t tok[B * T], tgt[B * T];
    double full = eval_run(&m, &val, SEQS * T, tok, tgt).loss;
    unsigned char none[3] = {0, 0, 0};
    m.skip = none;
    double skipped_none = eval_run(&m, &val, SEQS * T, tok, tgt).loss;
    m.skip = NULL;
    CHECK(full == skipped_none, "full %.15f, nothing skipped %.15f", full, skipped_none);
    const struct param_info *o = model_param(&m, 2, P_O), *dn = model_param(&m, 2, P_DOWN);
    memset(m.params + o->offset, 0, o->span * sizeof(real));
    memset(m.params + dn->offset, 0, dn->span * sizeof(real));
    struct prune_result r;
    char err[256];
    CHECK(!prune_run(&m, &val, SEQS * T, PRUNE_RECOMPUTE, &r, err, sizeof(err)), "%s", err);
    CHECK(prune_delta_loss(&r, 2) == 0 && prune_delta_ppl(&r, 2) == 0, "delta %.3g / %.3g",
          prune_delta_loss(&r, 2), prune_delta_ppl(&r, 2));
    CHECK(prune_delta_loss(&r, 1) != 0 && prune_delta_loss(&r, 3) != 0, "other blocks matter");
    prune_free(&r);
    loader_close(&val);
    model_destroy(&m);
}

/* The prefix the full forward computed, reused for each removal, gives
 * exactly the numbers of the L + 1 forwards it saves, whatever the block
 * recipe (Post-LN keeps its norm after the residual, Mix-LN mixes both). */
static void prune_reuse_equals_recompute(void)
{
    static const char *const norms[] = {"pre", "lns", "post", "mixln", "sandwich", "layerscale"};
    for (size_t k = 0; k < sizeof norms / sizeof norms[0]; k++) {
        struct model m;
        struct loader val;
        if (build(&m, norms[k], 4) || open_val(&val))
            return;
        struct prune_result a, b;
        char err[256];
        CHECK(!prune_run(&m, &val, SEQS * T, PRUNE_REUSE, &a, err, sizeof(err)), "%s", err);
        CHECK(!prune_run(&m, &val, SEQS * T, PRUNE_RECOMPUTE, &b, err, sizeof(err)), "%s", err);
        CHECK(a.tokens == b.tokens && a.base_loss == b.base_loss, "%s: base %.17g / %.17g",
              norms[k], a.base_loss, b.base_loss);
        for (int l = 1; l <= 4; l++)
            CHECK(a.loss[l] == b.loss[l] && a.ppl[l] == b.ppl[l],
                  "%s: block %d: reused %.17g, recomputed %.17g", norms[k], l, a.loss[l],
                  b.loss[l]);
        prune_free(&a);
        prune_free(&b);
        loader_close(&val);
        model_destroy(&m);
    }
}

static double direct_angle(const real *a, const real *b)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < D; i++) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    double c = ab / sqrt(aa * bb);
    return acos(c > 1 ? 1 : c < -1 ? -1 : c) / M_PI;
}

enum { MAX_L = 4 };

/* Σ of arccos(cos(x_ℓ, x_ℓ₊ₙ))/π over the positions of the first rows of
 * val that have a target (every position of a stream row), computed here
 * token by token, into want[ℓ][n]. */
static void direct_angles(struct model *m, const struct loader *val, int rows,
                          double want[MAX_L + 1][MAX_L + 1])
{
    int L = m->cfg.n_layers;
    int32_t tok[B * T], tgt[B * T];
    for (int s = 0; s < rows; s += B) {
        int nb = rows - s < B ? rows - s : B;
        for (int b = 0; b < nb; b++)
            loader_chunk(val, s + b, tok + b * T, tgt + b * T);
        model_forward(m, tok, tgt, nb, 0);
        for (int l = 1; l <= L; l++)
            for (int n = 1; l + n - 1 <= L; n++)
                for (int i = 0; i < nb * T; i++)
                    if (tgt[i] >= 0)
                        want[l][n] += direct_angle((const real *)m->stream[l - 1] + (size_t)i * D,
                                                   (const real *)m->stream[l - 1 + n] + (size_t)i * D);
    }
}

/* d(ℓ, n) over every token of SEQS sequences (three micro-batches, the last
 * short), against arccos of cosines computed here token by token. */
static void angular_matches_direct(void)
{
    enum { L = 4 };
    struct model m;
    struct loader val;
    if (build(&m, "lns", L) || open_val(&val))
        return;
    struct angular_result r;
    char err[256];
    CHECK(!angular_run(&m, &val, SEQS * T - 3, &r, err, sizeof(err)), "%s", err);
    CHECK(r.tokens == SEQS * T, "%lld tokens", (long long)r.tokens);
    double want[MAX_L + 1][MAX_L + 1] = {{0}};
    direct_angles(&m, &val, SEQS, want);
    for (int l = 1; l <= L; l++)
        for (int n = 1; n <= L; n++) {
            double d = angular_at(&r, l, n);
            if (l + n - 1 > L) {
                CHECK(isnan(d), "d(%d, %d) beyond the last block is %g", l, n, d);
                continue;
            }
            CHECK(fabs(d - want[l][n] / (SEQS * T)) < 1e-12, "d(%d, %d) = %.15f, direct %.15f",
                  l, n, d, want[l][n] / (SEQS * T));
            CHECK(d >= 0 && d <= 1, "d(%d, %d) = %g outside [0, 1]", l, n, d);
            double sc = angular_scaled(&r, l, n);
            CHECK(sc >= 0 && sc <= 1, "scaled d(%d, %d) = %g outside [0, 1]", l, n, sc);
        }
    /* each row's scaled form spans [0, 1] exactly when it has two values */
    double lo = 1, hi = 0;
    for (int n = 1; n <= L; n++) {
        lo = fmin(lo, angular_scaled(&r, 1, n));
        hi = fmax(hi, angular_scaled(&r, 1, n));
    }
    CHECK(lo == 0 && hi == 1, "row 1 scaled to [%g, %g]", lo, hi);
    json_t *j = angular_to_json(&r);
    CHECK(j && json_array_size(json_object_get(j, "distance")) == L &&
              json_array_size(json_array_get(json_object_get(j, "distance"), 0)) == L &&
              json_array_size(json_array_get(json_object_get(j, "scaled"), L - 1)) == 1,
          "angular JSON rows");
    json_decref(j);
    angular_free(&r);
    loader_close(&val);
    model_destroy(&m);
}

static int open_docs(struct loader *l)
{
    char err[256];
    struct loader_docs d = {V - 1, 0, 0};
    if (loader_open(l, docs_glob, T, 1, &d, err, sizeof(err))) {
        CHECK(0, "%s", err);
        return -1;
    }
    return 0;
}

/* Documents packing: d(ℓ, n) over the positions that have a target, the
 * pads of the short documents' rows left out, against the direct
 * computation over those positions; and the per-layer statistics of a
 * padded batch (trainer/stats.c) over them too. */
static void documents_leave_pads_out(void)
{
    enum { L = 3 };
    struct model m;
    struct loader val;
    if (build(&m, "lns", L) || open_docs(&val))
        return;
    int64_t targets = 0;
    for (int k = 0; k < N_DOCS; k++)
        targets += doc_len[k] - 1 < T ? doc_len[k] - 1 : T;
    struct angular_result r;
    char err[256];
    CHECK(!angular_run(&m, &val, 1000, &r, err, sizeof(err)), "%s", err);
    CHECK(r.tokens == targets && val.n_chunks == N_DOCS, "%lld tokens of %lld, %lld rows",
          (long long)r.tokens, (long long)targets, (long long)val.n_chunks);
    double want[MAX_L + 1][MAX_L + 1] = {{0}};
    direct_angles(&m, &val, N_DOCS, want);
    int32_t tok[B * T], tgt[B * T];
    for (int l = 1; l <= L; l++)
        for (int n = 1; l + n - 1 <= L; n++)
            CHECK(fabs(angular_at(&r, l, n) - want[l][n] / targets) < 1e-12,
                  "d(%d, %d) = %.15f, direct %.15f", l, n, angular_at(&r, l, n),
                  want[l][n] / targets);
    angular_free(&r);
    /* the first two documents: 2 and 8 targets of 16 positions */
    for (int b = 0; b < B; b++)
        loader_chunk(&val, b, tok + b * T, tgt + b * T);
    model_forward(&m, tok, tgt, B, 0);
    struct layer_stats st;
    struct rows rows;
    act *pack[2] = {NULL, NULL};
    if (stats_alloc(&st, L) || rows_alloc(&ops_cpu, pack, (size_t)B * T * D)) {
        CHECK(0, "out of memory");
        return;
    }
    rows_of(&rows, tgt, B, T, pack);
    stats_activations(&m, &rows, &st);
    CHECK(rows.n == 10, "%lld positions with a target, not 10", (long long)rows.n);
    for (int l = 0; l <= L; l++) {
        double sum = 0, sq = 0, ang = 0;
        for (int i = 0; i < B * T; i++) {
            if (tgt[i] < 0)
                continue;
            const real *x = (const real *)m.stream[l] + (size_t)i * D;
            for (int j = 0; j < D; j++) {
                sum += x[j];
                sq += x[j] * x[j];
            }
            if (l > 0)
                ang += direct_angle((const real *)m.stream[l - 1] + (size_t)i * D, x);
        }
        double n = 10.0 * D, var = sq / n - (sum / n) * (sum / n);
        CHECK(fabs(st.out_var[l] - var) < 1e-12 * fmax(1, var) &&
                  (l == 0 || fabs(st.angular[l] - ang / 10) < 1e-12),
              "layer %d: out_var %.15g (direct %.15g), angular %.15g (direct %.15g)", l,
              st.out_var[l], var, l ? st.angular[l] : 0, ang / 10);
    }
    rows_free(&ops_cpu, pack);
    stats_free(&st);
    loader_close(&val);
    model_destroy(&m);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    uint32_t tok[SEQS * (T + 1) + 3];
    struct rng r;
    rng_seed(&r, 9, 1);
    for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++)
        tok[i] = (uint32_t)(rng_next(&r) % V);
    char path[600], err[256];
    snprintf(path, sizeof(path), "%s/val_000.bin", dir);
    snprintf(val_glob, sizeof(val_glob), "%s/val_*.bin", dir);
    if (shard_write(path, tok, (int64_t)(sizeof(tok) / sizeof(tok[0])), 2, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint32_t docs[64];
    int64_t nd = 0;
    for (int k = 0; k < N_DOCS; k++) {
        docs[nd++] = V - 1;
        for (int i = 1; i < doc_len[k]; i++)
            docs[nd++] = (uint32_t)(rng_next(&r) % (V - 1));
    }
    char docs_path[600];
    snprintf(docs_path, sizeof(docs_path), "%s/docs_000.bin", dir);
    snprintf(docs_glob, sizeof(docs_glob), "%s/docs_*.bin", dir);
    if (shard_write(docs_path, docs, nd, 2, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    RUN(prune_matches_shorter_model);
    RUN(prune_lns_keeps_original_scale);
    RUN(prune_identity_block_costs_nothing);
    RUN(prune_reuse_equals_recompute);
    RUN(angular_matches_direct);
    RUN(documents_leave_pads_out);
    unlink(path);
    unlink(docs_path);
    rmdir(dir);
    CHECK_EXIT();
}
