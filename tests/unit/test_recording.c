/* The model's recorded micro-batch (model_step; ops.h's record_begin …
 * recording_free) checked without a GPU. A CUDA graph replays every value
 * an op took by value as it was when recorded, and reads its buffers as
 * they are at the replay. The recording backend here does the same over
 * the CPU ops: between record_begin and record_end a call is kept (its
 * pointers and its scalars) instead of run, and replay runs the kept calls
 * in order; an op that moves data to or from the host, or returns a value
 * to it, fails the recording, as it would fail a capture. Trained with it,
 * a model must give the op-by-op numbers bit for bit, for every norm
 * variant, over batches whose tokens change (the embedding's groups), a
 * batch of another size and an evaluation between updates. So a value of
 * the step that changes from batch to batch and reaches an op by value (a
 * graph would replay it stale) fails here, on the CPU, before a GPU runs
 * it. Also here: the micro-batches' losses, which model_step leaves on the
 * backend for the update to take in one sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/twin_update.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/train.h"

/* ---- the recording backend ---- */

enum { MAX_ARGS = 12 };
union arg {
    void *p;
    const void *c;
    int i;
    real r;
    size_t z;
};
struct call {
    void (*run)(const union arg *a);
    union arg a[MAX_ARGS];
};
struct recording {
    struct call *calls;
    size_t n, cap;
};

static struct recording *recording_now; /* between record_begin and record_end */
static char refused[160];               /* why the recording in progress cannot be replayed */

static void call(void (*run)(const union arg *), const union arg *a, size_t n)
{
    if (!recording_now) {
        run(a);
        return;
    }
    struct recording *r = recording_now;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        struct call *c = realloc(r->calls, cap * sizeof *c);
        if (!c) {
            snprintf(refused, sizeof refused, "out of memory for the recording");
            return;
        }
        r->calls = c;
        r->cap = cap;
    }
    struct call *c = &r->calls[r->n++];
    c->run = run;
    memcpy(c->a, a, n * sizeof *a);
}

#define CALL(run, ...)                                                                         \
    do {                                                                                       \
        union arg a_[] = {__VA_ARGS__};                                                        \
        call(run, a_, sizeof a_ / sizeof a_[0]);                                               \
    } while (0)

static void run_zero(const union arg *a) { ops_cpu.zero(a[0].p, a[1].z); }
static void r_zero(real *p, size_t n) { CALL(run_zero, {.p = p}, {.z = n}); }
static void run_zero_act(const union arg *a) { ops_cpu.zero_act(a[0].p, a[1].z); }
static void r_zero_act(act *p, size_t n) { CALL(run_zero_act, {.p = p}, {.z = n}); }
static void run_copy(const union arg *a) { ops_cpu.copy(a[0].p, a[1].c, a[2].z); }
static void r_copy(real *d, const real *s, size_t n) { CALL(run_copy, {.p = d}, {.c = s}, {.z = n}); }
static void run_copy_act(const union arg *a) { ops_cpu.copy_act(a[0].p, a[1].c, a[2].z); }
static void r_copy_act(act *d, const act *s, size_t n)
{
    CALL(run_copy_act, {.p = d}, {.c = s}, {.z = n});
}

static void run_matmul_fwd(const union arg *a)
{
    ops_cpu.matmul_fwd(a[0].p, a[1].c, a[2].c, a[3].i, a[4].i, a[5].i, a[6].r, a[7].c, a[8].r);
}
static void r_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real al,
                         const act *res, real b)
{
    CALL(run_matmul_fwd, {.p = out}, {.c = in}, {.c = w}, {.i = N}, {.i = In}, {.i = Out},
         {.r = al}, {.c = res}, {.r = b});
}
static void run_matmul_bwd(const union arg *a)
{
    ops_cpu.matmul_bwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].c, a[5].i, a[6].i, a[7].i, a[8].r,
                       a[9].c, a[10].r);
}
static void r_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                         int In, int Out, real al, const act *res, real b)
{
    CALL(run_matmul_bwd, {.p = din}, {.p = dw}, {.c = dout}, {.c = in}, {.c = w}, {.i = N},
         {.i = In}, {.i = Out}, {.r = al}, {.c = res}, {.r = b});
}

static void run_embedding_fwd(const union arg *a)
{
    ops_cpu.embedding_fwd(a[0].p, a[1].c, a[2].c, a[3].i, a[4].i);
}
static void r_embedding_fwd(act *out, const int32_t *tok, const act *table, int N, int d)
{
    CALL(run_embedding_fwd, {.p = out}, {.c = tok}, {.c = table}, {.i = N}, {.i = d});
}
static void run_embedding_bwd(const union arg *a)
{
    ops_cpu.embedding_bwd(a[0].p, a[1].c, a[2].c, a[3].c, a[4].c, a[5].i, a[6].i);
}
static void r_embedding_bwd(real *dt, const act *dout, const int32_t *tok, const int32_t *pos,
                            const int32_t *start, int n_groups, int d)
{
    CALL(run_embedding_bwd, {.p = dt}, {.c = dout}, {.c = tok}, {.c = pos}, {.c = start},
         {.i = n_groups}, {.i = d});
}

static void run_rmsnorm_fwd(const union arg *a)
{
    ops_cpu.rmsnorm_fwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].i, a[5].i, a[6].r, a[7].r, a[8].r,
                        a[9].c, a[10].r);
}
static void r_rmsnorm_fwd(act *out, real *rstd, const act *x, const real *g, int N, int d,
                          real s_in, real s_out, real eps, const act *res, real b)
{
    CALL(run_rmsnorm_fwd, {.p = out}, {.p = rstd}, {.c = x}, {.c = g}, {.i = N}, {.i = d},
         {.r = s_in}, {.r = s_out}, {.r = eps}, {.c = res}, {.r = b});
}
static void run_rmsnorm_bwd(const union arg *a)
{
    ops_cpu.rmsnorm_bwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].c, a[5].c, a[6].i, a[7].i, a[8].r,
                        a[9].r, a[10].c, a[11].r);
}
static void r_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                          const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                          real b)
{
    CALL(run_rmsnorm_bwd, {.p = dx}, {.p = dg}, {.c = dout}, {.c = x}, {.c = g}, {.c = rstd},
         {.i = N}, {.i = d}, {.r = s_in}, {.r = s_out}, {.c = res}, {.r = b});
}

static void run_attention_fwd(const union arg *a)
{
    ops_cpu.attention_fwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].c, a[5].i, a[6].i, a[7].i, a[8].i);
}
static void r_attention_fwd(act *out, real *state, const act *qkv, const real *cs, const real *sn,
                            int B, int T, int nh, int hd)
{
    CALL(run_attention_fwd, {.p = out}, {.p = state}, {.c = qkv}, {.c = cs}, {.c = sn}, {.i = B},
         {.i = T}, {.i = nh}, {.i = hd});
}
static void run_attention_bwd(const union arg *a)
{
    ops_cpu.attention_bwd(a[0].p, a[1].c, a[2].c, a[3].p, a[4].c, a[5].c, a[6].c, a[7].i, a[8].i,
                          a[9].i, a[10].i);
}
static void r_attention_bwd(act *dqkv, const act *dout, const act *out, real *state,
                            const act *qkv, const real *cs, const real *sn, int B, int T, int nh,
                            int hd)
{
    CALL(run_attention_bwd, {.p = dqkv}, {.c = dout}, {.c = out}, {.p = state}, {.c = qkv},
         {.c = cs}, {.c = sn}, {.i = B}, {.i = T}, {.i = nh}, {.i = hd});
}

static void run_swiglu_fwd(const union arg *a) { ops_cpu.swiglu_fwd(a[0].p, a[1].c, a[2].i, a[3].i); }
static void r_swiglu_fwd(act *h, const act *gu, int N, int f)
{
    CALL(run_swiglu_fwd, {.p = h}, {.c = gu}, {.i = N}, {.i = f});
}
static void run_swiglu_bwd(const union arg *a)
{
    ops_cpu.swiglu_bwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].i, a[5].i);
}
static void r_swiglu_bwd(act *dgu, act *h, const act *dh, const act *gu, int N, int f)
{
    CALL(run_swiglu_bwd, {.p = dgu}, {.p = h}, {.c = dh}, {.c = gu}, {.i = N}, {.i = f});
}

static void run_axpby(const union arg *a) { ops_cpu.axpby(a[0].p, a[1].r, a[2].c, a[3].r, a[4].z); }
static void r_axpby(act *y, real al, const act *x, real b, size_t n)
{
    CALL(run_axpby, {.p = y}, {.r = al}, {.c = x}, {.r = b}, {.z = n});
}
static void run_chscale_fwd(const union arg *a)
{
    ops_cpu.chscale_fwd(a[0].p, a[1].c, a[2].c, a[3].i, a[4].i, a[5].i);
}
static void r_chscale_fwd(act *out, const act *in, const real *lam, int N, int d, int c)
{
    CALL(run_chscale_fwd, {.p = out}, {.c = in}, {.c = lam}, {.i = N}, {.i = d}, {.i = c});
}
static void run_chscale_bwd(const union arg *a)
{
    ops_cpu.chscale_bwd(a[0].p, a[1].p, a[2].c, a[3].c, a[4].c, a[5].i, a[6].i, a[7].i);
}
static void r_chscale_bwd(act *din, real *dlam, const act *dout, const act *in, const real *lam,
                          int N, int d, int c)
{
    CALL(run_chscale_bwd, {.p = din}, {.p = dlam}, {.c = dout}, {.c = in}, {.c = lam}, {.i = N},
         {.i = d}, {.i = c});
}

static void run_cross_entropy(const union arg *a)
{
    ops_cpu.cross_entropy(a[0].p, a[1].p, a[2].c, a[3].i, a[4].i, a[5].r);
}
static void r_cross_entropy(real *loss, act *logits, const int32_t *tgt, int N, int V, real gs)
{
    CALL(run_cross_entropy, {.p = loss}, {.p = logits}, {.c = tgt}, {.i = N}, {.i = V}, {.r = gs});
}

/* what a capture cannot hold: the host waits for, or hands over, data */
static void refuse(const char *op)
{
    if (recording_now && !refused[0])
        snprintf(refused, sizeof refused, "%s while recording", op);
}
static void r_upload(real *d, const real *h, size_t n) { refuse("upload"), ops_cpu.upload(d, h, n); }
static void r_download(real *h, const real *s, size_t n)
{
    refuse("download"), ops_cpu.download(h, s, n);
}
static void r_upload_i32(int32_t *d, const int32_t *h, size_t n)
{
    refuse("upload_i32"), ops_cpu.upload_i32(d, h, n);
}
static double r_sum(const real *x, size_t n) { return refuse("sum"), ops_cpu.sum(x, n); }
static double r_sumsq(const real *x, size_t n) { return refuse("sumsq"), ops_cpu.sumsq(x, n); }
static double r_act_sumsq(const act *x, size_t n)
{
    return refuse("act_sumsq"), ops_cpu.act_sumsq(x, n);
}
static real *r_alloc(size_t n) { return refuse("alloc"), ops_cpu.alloc(n); }
static act *r_alloc_act(size_t n) { return refuse("alloc_act"), ops_cpu.alloc_act(n); }
static int32_t *r_alloc_i32(size_t n) { return refuse("alloc_i32"), ops_cpu.alloc_i32(n); }
static void r_free(void *p) { refuse("free"), ops_cpu.free(p); }
static void r_upload_act(act *d, const real *h, size_t n)
{
    refuse("upload_act"), ops_cpu.upload_act(d, h, n);
}
static void r_download_act(real *h, const act *s, size_t n)
{
    refuse("download_act"), ops_cpu.download_act(h, s, n);
}
static void r_to_act(act *d, const real *s, size_t n) { refuse("to_act"), ops_cpu.to_act(d, s, n); }
static double r_dist2(const real *x, const real *y, size_t n)
{
    return refuse("dist2"), ops_cpu.dist2(x, y, n);
}
static double r_act_sum(const act *x, size_t n) { return refuse("act_sum"), ops_cpu.act_sum(x, n); }
static double r_angular_sum(const act *x, const act *y, int N, int d)
{
    return refuse("angular_sum"), ops_cpu.angular_sum(x, y, N, d);
}
static double r_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr,
                     real b1, real b2, real eps, real wd, long step, double clip,
                     const struct adam_extra *x)
{
    refuse("adam");
    return ops_cpu.adam(p, pact, g, m, v, n, lr, b1, b2, eps, wd, step, clip, x);
}

static int r_record_begin(char *err, size_t errlen)
{
    if (!(recording_now = calloc(1, sizeof *recording_now))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    refused[0] = 0;
    return 0;
}

static recording *r_record_end(char *err, size_t errlen)
{
    struct recording *r = recording_now;
    recording_now = NULL;
    if (refused[0]) {
        snprintf(err, errlen, "%s", refused);
        free(r->calls);
        free(r);
        return NULL;
    }
    return r;
}

static long replays_run;

static int r_replay(recording *r)
{
    for (size_t i = 0; i < r->n; i++)
        r->calls[i].run(r->calls[i].a);
    replays_run++;
    return 0;
}

static void r_recording_free(recording *r)
{
    free(r->calls);
    free(r);
}

static struct ops recording_ops(void)
{
    struct ops o = ops_cpu;
    o.name = "cpu-recording";
    o.zero = r_zero, o.zero_act = r_zero_act, o.copy = r_copy, o.copy_act = r_copy_act;
    o.matmul_fwd = r_matmul_fwd, o.matmul_bwd = r_matmul_bwd;
    o.embedding_fwd = r_embedding_fwd, o.embedding_bwd = r_embedding_bwd;
    o.rmsnorm_fwd = r_rmsnorm_fwd;
    o.rmsnorm_bwd = r_rmsnorm_bwd;
    o.attention_fwd = r_attention_fwd, o.attention_bwd = r_attention_bwd;
    o.swiglu_fwd = r_swiglu_fwd, o.swiglu_bwd = r_swiglu_bwd, o.axpby = r_axpby;
    o.chscale_fwd = r_chscale_fwd, o.chscale_bwd = r_chscale_bwd;
    o.cross_entropy = r_cross_entropy;
    o.upload = r_upload, o.download = r_download, o.upload_i32 = r_upload_i32;
    o.sum = r_sum, o.sumsq = r_sumsq, o.act_sumsq = r_act_sumsq, o.adam = r_adam;
    o.alloc = r_alloc, o.alloc_act = r_alloc_act, o.alloc_i32 = r_alloc_i32, o.free = r_free;
    o.upload_act = r_upload_act, o.download_act = r_download_act, o.to_act = r_to_act;
    o.dist2 = r_dist2, o.act_sum = r_act_sum, o.angular_sum = r_angular_sum;
    o.record_begin = r_record_begin, o.record_end = r_record_end;
    o.replay = r_replay, o.recording_free = r_recording_free;
    return o;
}

/* ---- the checks ---- */

enum { T = 16, MAX_B = 3, VOCAB = 61, STEPS = 8 };

static int config(const char *norm, struct model_config *c)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"model\": {\"dim\": 32, \"n_layers\": 3, \"n_heads\": 2, \"ffn_dim\": 40}, "
             "\"norm\": \"%s\"}", norm);
    struct job_spec s;
    struct spec_error e;
    if (spec_parse(text, strlen(text), &s, &e) != 0) {
        fprintf(stderr, "  %s: %s: %s\n", norm, e.field, e.message);
        return -1;
    }
    *c = train_model_config(&s);
    c->vocab = VOCAB;
    c->seq_len = T;
    return 0;
}

static long ranges_told;
static void count_ranges(void *ctx, size_t lo, size_t hi)
{
    (void)ctx, (void)lo, (void)hi;
    ranges_told++;
}

/* Two copies of a model, one on the CPU ops and one on the recording ops,
 * take the same updates; returns how many steps differed. Batch sizes:
 * MAX_B, except 2 at step 5; an evaluation after step 6; at step 8 the
 * recording copy announces its gradients (as a gang's last micro-batch
 * does), which must run op by op. */
static int train_both(const struct ops *rec, const char *norm, long *replayed)
{
    struct model_config cfg;
    struct model a, b;
    char err[512];
    if (config(norm, &cfg) != 0)
        return 1;
    if (model_create(&a, &ops_cpu, &cfg, MAX_B, err, sizeof err) != 0 ||
        model_create(&b, rec, &cfg, MAX_B, err, sizeof err) != 0) {
        fprintf(stderr, "  %s: %s\n", norm, err);
        return 1;
    }
    size_t n = a.n_params;
    real *am = calloc(n, sizeof(real)), *av = calloc(n, sizeof(real)),
         *bm = calloc(n, sizeof(real)), *bv = calloc(n, sizeof(real));
    int32_t tok[MAX_B * T], tgt[MAX_B * T];
    int differ = 0;
    if (!am || !av || !bm || !bv || model_init_weights(&a, 5, err, sizeof err) != 0 ||
        model_init_weights(&b, 5, err, sizeof err) != 0) {
        fprintf(stderr, "  %s: setup failed\n", norm);
        differ = 1;
        goto out;
    }
    struct model *both[2] = {&a, &b};
    real *ms[2] = {am, bm}, *vs[2] = {av, bv};
    struct rng r;
    rng_seed(&r, 3, 0);
    long told_before = ranges_told;
    for (int step = 0; step < STEPS; step++) {
        int B = step == 4 ? 2 : MAX_B;
        for (int i = 0; i < B * T; i++) {
            /* a few tokens often, so that the groups change with the batch */
            tok[i] = (int32_t)(rng_uniform(&r) * (step % 2 ? VOCAB : 7));
            tgt[i] = i % 11 == 4 ? -1 : (int32_t)(rng_uniform(&r) * VOCAB);
        }
        if (step == 7) {
            b.grads_ready = count_ranges;
            b.grads_ctx = NULL;
        }
        double l[2], g[2];
        twin_update(both, ms, vs, tok, tgt, B, 1e-2f, step + 1, l, g);
        b.grads_ready = NULL;
        double ea = 0, eb = 0;
        if (step == 5) {
            ea = model_forward(&a, tok, tgt, MAX_B, 0);
            eb = model_forward(&b, tok, tgt, MAX_B, 0);
        }
        if (l[0] != l[1] || g[0] != g[1] || ea != eb ||
            memcmp(a.params, b.params, n * sizeof(real)) != 0) {
            fprintf(stderr, "  %s: step %d differs: loss %.9g / %.9g, ‖g‖ %.9g / %.9g\n", norm,
                    step + 1, l[0], l[1], g[0], g[1]);
            differ++;
        }
    }
    if (b.rec.off) {
        fprintf(stderr, "  %s: not recorded: %s\n", norm, b.rec.why);
        differ++;
    }
    if (ranges_told == told_before) {
        fprintf(stderr, "  %s: the announced step did not announce its gradients\n", norm);
        differ++;
    }
    *replayed = b.rec.replays;
out:
    free(am), free(av), free(bm), free(bv);
    model_destroy(&a);
    model_destroy(&b);
    return differ;
}

static void every_variant_replays_bit_for_bit(void)
{
    struct ops rec = recording_ops();
    char names[512];
    snprintf(names, sizeof names, "%s", variant_preset_names());
    for (char *save = NULL, *v = strtok_r(names, ", ", &save); v; v = strtok_r(NULL, ", ", &save)) {
        long replayed = 0, before = replays_run;
        CHECK(train_both(&rec, v, &replayed) == 0, "%s: the recorded copy differs", v);
        /* replayed: steps 2, 3 and 4 (recorded at 2), then 7 (the size
         * changed at 5 and back at 6; recorded at 7); 8 announces */
        CHECK(replayed == 4 && replays_run - before == 4, "%s: %ld micro-batches replayed, 4 expected",
              v, replayed);
    }
}

/* The double itself: a replay reads its buffers as they are then and its
 * scalars as they were, so a model that let a changing count reach an op
 * by value would be caught above. */
static void a_replay_keeps_the_recorded_scalars(void)
{
    struct ops rec = recording_ops();
    enum { D = 2 };
    real dt[4 * D] = {0}, dout[3 * D] = {1, 1, 10, 10, 100, 100};
    int32_t tok[3] = {0, 1, 0}, pos[3] = {0, 2, 1}, start[3] = {0, 2, 3};
    char err[160];
    CHECK(rec.record_begin(err, sizeof err) == 0, "%s", err);
    rec.embedding_bwd(dt, (const act *)dout, tok, pos, start, 1, D);
    recording *r = rec.record_end(err, sizeof err);
    CHECK(r && dt[0] == 0, "recorded, not run");
    if (!r)
        return;
    tok[0] = tok[2] = 3; /* the buffers changed after the recording: the replay reads them */
    CHECK(rec.replay(r) == 0, "replayed");
    CHECK(dt[3 * D] == 101 && dt[0] == 0 && dt[D] == 0,
          "one group, as recorded, whose token the replay reads anew: rows 0, 1, 3: %g %g %g",
          dt[0], dt[D], dt[3 * D]);
    rec.recording_free(r);
    CHECK(rec.record_begin(err, sizeof err) == 0, "%s", err);
    rec.embedding_fwd((act *)dout, tok, (const act *)dt, 3, D);
    double s = rec.sum(dt, 4 * D);
    CHECK(rec.record_end(err, sizeof err) == NULL && strstr(err, "sum"),
          "an op that answers the host fails the recording (%g): %s", s, err);
}

/* ---- the update's losses, kept on the backend ---- */

static int refuse_alloc;
static real *maybe_alloc(size_t n) { return refuse_alloc ? NULL : ops_cpu.alloc(n); }

/* model_step keeps each micro-batch's per-token losses on the backend and
 * model_losses_take sums them once, so that a GPU's host never waits for a
 * micro-batch to end: the sum must be every micro-batch's since the last
 * take (five of them here: the rows grow three times, and from the second
 * on they come from a replay), and so when the rows' memory is refused
 * (each micro-batch's sum is read at once). The reference is each batch's
 * loss from model_forward on a twin with the same weights. */
static void an_update_takes_the_losses_of_its_micro_batches(void)
{
    struct ops rec = recording_ops(), refusing = ops_cpu;
    refusing.alloc = maybe_alloc;
    const struct ops *kinds[2] = {&rec, &refusing};
    struct model_config cfg;
    if (config("lns", &cfg) != 0) {
        CHECK(0, "config");
        return;
    }
    for (int kind = 0; kind < 2; kind++) {
        struct model a, b;
        char err[512];
        refuse_alloc = 0;
        if (model_create(&a, &ops_cpu, &cfg, MAX_B, err, sizeof err) != 0 ||
            model_create(&b, kinds[kind], &cfg, MAX_B, err, sizeof err) != 0 ||
            model_init_weights(&a, 9, err, sizeof err) != 0 ||
            model_init_weights(&b, 9, err, sizeof err) != 0) {
            CHECK(0, "%s: %s", kinds[kind]->name, err);
            return;
        }
        refuse_alloc = kind == 1;
        int32_t tok[MAX_B * T], tgt[MAX_B * T];
        struct rng r;
        rng_seed(&r, 4, 0);
        for (int update = 0; update < 2; update++) {
            double want = 0;
            for (int k = 0; k < 5; k++) {
                for (int i = 0; i < MAX_B * T; i++) {
                    tok[i] = (int32_t)(rng_uniform(&r) * VOCAB);
                    tgt[i] = i % 7 == 3 ? -1 : (int32_t)(rng_uniform(&r) * VOCAB);
                }
                want += model_forward(&a, tok, tgt, MAX_B, 0);
                model_step(&b, tok, tgt, MAX_B, (real)(1.0 / (5 * MAX_B * T)));
            }
            double got = model_losses_take(&b), again = model_losses_take(&b);
            CHECK(fabs(got - want) <= 1e-12 * fabs(want) && want > 0 && again == 0,
                  "%s, update %d: %.17g taken, %.17g the micro-batches' sum; then %g",
                  kinds[kind]->name, update + 1, got, want, again);
        }
        CHECK(kind == 0 ? b.loss_cap == 8 * MAX_B * T && b.rec.replays == 9 : b.loss_cap == 0,
              "%s: rows for %zu losses kept, %ld replays", kinds[kind]->name, b.loss_cap,
              b.rec.replays);
        model_destroy(&a);
        model_destroy(&b);
    }
}

int main(void)
{
    RUN(every_variant_replays_bit_for_bit);
    RUN(a_replay_keeps_the_recorded_scalars);
    RUN(an_update_takes_the_losses_of_its_micro_batches);
    CHECK_EXIT();
}
