#include "trainer/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fileio.h"
#include "common/path.h"
#include "kernels/comm.h"
#include "trainer/angular.h"
#include "trainer/checkpoint.h"
#include "trainer/dataloader.h"
#include "trainer/eval.h"
#include "trainer/hf_load.h"
#include "trainer/metrics_log.h"
#include "trainer/model.h"
#include "trainer/prune.h"
#include "trainer/rows.h"
#include "trainer/schedule.h"
#include "trainer/stats.h"

struct run {
    const struct job_spec *spec;
    const struct train_opts *opts;
    const struct loader *heldout; /* the statistics' batch: val, or train without one */
    const struct train_hooks *hooks;
    const char *out_dir;
    struct metrics_log log;
    struct model m;
    struct loader train, val;
    real *adam_m, *adam_v, *before;
    act *pack[2];            /* documents packing: the statistics' batch without its pads */
    int32_t *tok, *tgt;
    long long tokens;        /* the targets trained on (checkpoints' state.json) */
    int64_t train_stride;    /* eval.train_tokens' sample: every train_stride-th row (0: not yet) */
    struct layer_stats stats;
    json_t *spec_json;
    struct comm *comm; /* the gang's, or comm_single */
    int rank, world;
    int fault;               /* the run failed for a fault of the machine (machine_fault) */
    int told_recording;      /* note_recording has said its line */
    int told_attention;      /* note_attention has said its line */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The processor time of the whole process (every thread's). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 speaks for the gang: it alone writes and reports metrics. */
static void emit(struct run *r, long step, const char *name, int layer, double value)
{
    if (r->rank != 0)
        return;
    /* a write that fails (a full disk) ends the run at the next machine_fault */
    metrics_log_write(&r->log, step, name, layer, value);
    if (r->hooks && r->hooks->metric)
        r->hooks->metric(r->hooks->ctx, step, name, layer, value);
}

static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (r->hooks && r->hooks->log)
        r->hooks->log(r->hooks->ctx, line);
}

/* A hook's records (train_emit), through the run's own. */
static void emit_point(void *run, long step, const char *name, int layer, double value)
{
    emit(run, step, name, layer, value);
}

static void emit_line(void *run, const char *line)
{
    say(run, "%s", line);
}

/* Each rank evaluates its share of the sequences; the sums add. */
static void evaluate_set(struct run *r, long step, const struct loader *set, int64_t tokens,
                         int64_t stride, const char *what)
{
    int64_t count;
    double v[2];
    eval_sample_shard(&r->m, set, tokens, stride, r->rank, r->world, r->tok, r->tgt, &v[0], &count);
    v[1] = (double)count;
    r->comm->allreduce_host(r->comm, v, 2);
    double loss = v[1] > 0 ? v[0] / v[1] : NAN, ppl = exp(loss);
    char name[32];
    snprintf(name, sizeof(name), "%s/loss", what);
    emit(r, step, name, -1, loss);
    snprintf(name, sizeof(name), "%s/ppl", what);
    emit(r, step, name, -1, ppl);
    if (r->rank == 0)
        say(r, "%s step %ld: loss %.4f ppl %.2f over %.0f tokens", what, step, loss, ppl, v[1]);
}

/* The held-out loss, and beside it, where eval.train_tokens asks, the same
 * model's loss on a fixed sample of the training rows. */
static void evaluate(struct run *r, long step)
{
    evaluate_set(r, step, &r->val, r->spec->eval_tokens, 1, "eval");
    if (r->spec->eval_train_tokens <= 0)
        return;
    if (!r->train_stride)
        r->train_stride = eval_sample_stride(&r->train, r->spec->eval_train_tokens);
    evaluate_set(r, step, &r->train, r->spec->eval_train_tokens, r->train_stride, "train_eval");
}

/* Activations on the fixed held-out batch: the first micro-batch of
 * validation, over its positions with a target (not a row's pads). */
static void layer_stats(struct run *r, long step, int with_grads)
{
    int T = r->spec->train.seq_len, B = r->m.max_B;
    if (B > r->heldout->n_chunks)
        B = (int)r->heldout->n_chunks;
    loader_rows(r->heldout, 0, B, r->tok, r->tgt);
    model_forward(&r->m, r->tok, r->tgt, B, 0);
    struct rows real_rows;
    rows_of(&real_rows, r->tgt, B, T, r->pack);
    stats_activations(&r->m, &real_rows, &r->stats);
    for (int l = 0; l <= r->spec->model.n_layers; l++) {
        emit(r, step, "layer/out_var", l, r->stats.out_var[l]);
        emit(r, step, "layer/out_rms", l, r->stats.out_rms[l]);
        if (l == 0)
            continue;
        emit(r, step, "layer/angular", l, r->stats.angular[l]);
        if (with_grads) {
            emit(r, step, "layer/grad_norm", l, r->stats.grad_norm[l]);
            emit(r, step, "layer/update_ratio", l, r->stats.update_ratio[l]);
        }
    }
}

static int save(struct run *r, long step, char *err, size_t errlen)
{
    if (r->rank != 0)
        return 0;
    struct train_state st = {.step = step,
                             .samples = (long long)step * r->spec->train.batch_seqs,
                             .tokens = r->tokens,
                             .seed = r->spec->train.seed,
                             .final = step == r->spec->train.steps};
    if (checkpoint_save(r->out_dir, &r->m, r->adam_m, r->adam_v, &st, r->spec_json,
                        r->spec->checkpoint_keep, err, errlen)) {
        r->fault = 1; /* the machine's disk, not the experiment: another attempt may do */
        return -1;
    }
    say(r, "checkpoint at step %ld", step);
    return 0;
}

/* The first top-level field whose value differs, for a resume refused. */
static const char *first_difference(json_t *a, json_t *b)
{
    const char *key;
    json_t *v;
    json_object_foreach(a, key, v) if (!json_equal(v, json_object_get(b, key))) return key;
    json_object_foreach(b, key, v) if (!json_object_get(a, key)) return key;
    return "?";
}

static int resume(struct run *r, long *step, char *err, size_t errlen)
{
    char path[4400];
    int found = checkpoint_latest(r->out_dir, path, sizeof(path), err, errlen);
    if (found <= 0)
        return found;
    struct train_state st;
    json_t *ck_spec = NULL;
    if (checkpoint_load(path, &r->m, r->adam_m, r->adam_v, &st, &ck_spec, err, errlen))
        return -1;
    r->tokens = st.tokens >= 0 ? st.tokens : st.samples * r->spec->train.seq_len;
    /* a checkpoint of a cod without the recipe's settings ran their values of that time */
    int same = spec_upgrade(ck_spec) == 0 && json_equal(ck_spec, r->spec_json);
    if (!same)
        snprintf(err, errlen, "%s: the spec differs from the checkpoint's in field \"%s\"", path,
                 first_difference(ck_spec, r->spec_json));
    json_decref(ck_spec);
    if (!same)
        return -1;
    *step = st.step;
    return 1;
}

/* Rank 0 decides from its checkpoints; the others take its state. */
static int resume_gang(struct run *r, int want, long *step, char *err, size_t errlen)
{
    double v[2] = {0, 0};
    if (r->rank == 0 && want) {
        int found = resume(r, step, err, errlen);
        v[0] = found;
        v[1] = found > 0 ? (double)*step : 0;
    }
    r->comm->allreduce_host(r->comm, v, 2);
    if (v[0] < 0) {
        if (r->rank != 0)
            snprintf(err, errlen, "rank 0 could not resume the run");
        return -1;
    }
    if (v[0] == 0)
        return 0;
    *step = (long)v[1];
    if (r->world > 1) {
        size_t n = r->m.n_params;
        r->comm->broadcast(r->comm, r->m.params, n, 0);
        r->comm->broadcast(r->comm, r->adam_m, n, 0);
        r->comm->broadcast(r->comm, r->adam_v, n, 0);
        r->comm->wait(r->comm);
        model_sync_weights(&r->m);
    }
    return 1;
}

int64_t train_sample_index(const struct job_spec *s, long step, int rank, int world, int i)
{
    return (int64_t)step * s->train.batch_seqs + (int64_t)rank * (s->train.batch_seqs / world) + i;
}

struct model_config train_model_config(const struct job_spec *s)
{
    return (struct model_config){.dim = s->model.dim, .n_layers = s->model.n_layers,
                                 .n_heads = s->model.n_heads, .ffn_dim = s->model.ffn_dim,
                                 .vocab = s->model.vocab, .seq_len = s->train.seq_len,
                                 .norm = s->norm, .rope_theta = s->model.rope_theta,
                                 .norm_eps = s->model.norm_eps,
                                 .embed_std = s->model.embed_std,
                                 .bf16 = s->train.precision == PRECISION_BF16};
}

static int setup(struct run *r, char *err, size_t errlen)
{
    const struct job_spec *s = r->spec;
    const struct ops *o = r->m.ops;
    if (s->train.batch_seqs % (r->world * s->train.micro_batch) != 0) {
        snprintf(err, errlen,
                 "train.batch_seqs: %d sequences do not split over %d ranks in micro-batches "
                 "of %d",
                 s->train.batch_seqs, r->world, s->train.micro_batch);
        return -1;
    }
    if (s->format == FORMAT_INSTRUCTIONS && !r->opts->train_rows) {
        snprintf(err, errlen, "data.format \"instructions\": no rows were made of the records");
        return -1;
    }
    int T = s->train.seq_len;
    if (r->opts->train_rows
            ? loader_open_rows(&r->train, r->opts->train_rows, T, s->train.seed, r->opts->pad, err,
                               errlen) ||
                  (r->opts->val_rows && loader_open_rows(&r->val, r->opts->val_rows, T, 0,
                                                         r->opts->pad, err, errlen))
            : loader_open_spec(&r->train, s, s->train_glob, "data.train", err, errlen) ||
                  loader_open_spec(&r->val, s, s->val_glob, "data.val", err, errlen))
        return -1;
    /* without held-out rows the statistics take training's first rows */
    r->heldout = r->val.n_chunks ? &r->val : &r->train;
    struct model_config c = train_model_config(s);
    if (model_create(&r->m, o, &c, s->train.micro_batch, err, errlen))
        return -1;
    size_t n = r->m.n_params, bt = (size_t)s->train.micro_batch * s->train.seq_len;
    if (spec_rows_partial(s) && s->stats_every > 0 &&
        rows_alloc(o, r->pack, bt * (size_t)s->model.dim)) {
        snprintf(err, errlen, "out of memory on %s for the statistics' batch without its pads",
                 o->name);
        return -1;
    }
    r->adam_m = o->alloc(n);
    r->adam_v = o->alloc(n);
    r->before = s->stats_every > 0 ? o->alloc(n) : NULL;
    r->tok = malloc(bt * sizeof(int32_t));
    r->tgt = malloc(bt * sizeof(int32_t));
    r->spec_json = spec_to_json(s);
    if (!r->adam_m || !r->adam_v || (s->stats_every > 0 && !r->before) || !r->tok || !r->tgt ||
        !r->spec_json || stats_alloc(&r->stats, s->model.n_layers)) {
        int copies = s->stats_every > 0 ? 3 : 2;
        snprintf(err, errlen,
                 "out of memory on %s for the optimizer state: %.2f GiB (Adam m and v%s of "
                 "%.2fM parameters, %s)",
                 o->name, copies * (double)n * sizeof(real) / 1073741824.0,
                 copies == 3 ? ", and a copy for the update ratios" : "", n / 1e6, s->model.preset);
        return -1;
    }
    return 0;
}

static void teardown(struct run *r)
{
    const struct ops *o = r->m.ops;
    if (o) {
        o->free(r->adam_m);
        o->free(r->adam_v);
        o->free(r->before);
        rows_free(o, r->pack);
        model_destroy(&r->m);
    }
    free(r->tok);
    free(r->tgt);
    stats_free(&r->stats);
    json_decref(r->spec_json);
    loader_close(&r->train);
    loader_close(&r->val);
    metrics_log_close(&r->log);
}

static void sum_grads(void *ctx, size_t lo, size_t hi)
{
    struct run *r = ctx;
    r->comm->allreduce(r->comm, r->m.grads + lo, hi - lo);
}

/* The targets of update `step`'s whole batch, every rank's share: all
 * batch·T in stream packing; in documents packing and instruction rows what
 * its rows hold, known from the loader's index before any is read, so every
 * rank scales by the same count. *inputs: the positions that hold a token,
 * not a pad (a prompt's are inputs but no targets): the tokens a second. */
static double batch_targets(const struct run *r, long step, double *inputs)
{
    const struct job_spec *s = r->spec;
    *inputs = (double)s->train.batch_seqs * s->train.seq_len;
    if (!r->train.partial)
        return *inputs;
    double count = 0;
    *inputs = 0;
    for (int i = 0; i < s->train.batch_seqs; i++) {
        int64_t k = loader_sample_row(&r->train, train_sample_index(s, step, 0, 1, i));
        count += loader_targets(&r->train, k);
        *inputs += loader_inputs(&r->train, k);
    }
    return count;
}

/* One optimizer update over batch_seqs sequences, this rank's share of
 * them; returns the share's summed loss, and in *count the whole batch's
 * targets. The gradients are scaled for the whole batch, so the ranks' sum
 * is the batch's mean gradient over its targets: every rank then takes the
 * same Adam step. */
static double update(struct run *r, long step, int with_stats, double *count, double *inputs,
                     double *grad_norm, double *lr)
{
    const struct job_spec *s = r->spec;
    const struct ops *o = r->m.ops;
    int T = s->train.seq_len, mb = s->train.micro_batch;
    int n_micro = s->train.batch_seqs / r->world / mb;
    /* The micro-batches' losses are scaled by the batch's slots, a constant
     * (a recorded micro-batch replays its scale), and Adam rescales the
     * gradient to the mean over the targets. */
    double slots = (double)s->train.batch_seqs * T;
    *count = batch_targets(r, step, inputs);
    o->zero(r->m.grads, r->m.n_params);
    for (int k = 0; k < n_micro; k++) {
        for (int b = 0; b < mb; b++)
            loader_sample(&r->train, train_sample_index(s, step, r->rank, r->world, k * mb + b),
                          r->tok + (size_t)b * T, r->tgt + (size_t)b * T);
        if (r->world > 1 && k == n_micro - 1) {
            /* the last micro-batch: each block's gradients go out as they are done */
            r->m.grads_ready = sum_grads;
            r->m.grads_ctx = r;
        }
        model_step(&r->m, r->tok, r->tgt, mb, (real)(1.0 / slots));
        r->m.grads_ready = NULL;
    }
    double sum = model_losses_take(&r->m);
    r->comm->wait(r->comm);
    if (with_stats)
        o->copy(r->before, r->m.params, r->m.n_params);
    *lr = schedule_lr(s->train.schedule, s->train.lr, s->train.warmup, s->train.steps,
                      s->train.min_lr_ratio, step);
    struct adam_extra x = {.grad_scale = slots / *count,
                           .bf16 = s->train.precision == PRECISION_BF16,
                           .ranges = r->m.learn_ranges, .n_ranges = r->m.n_learn_ranges};
    *grad_norm = o->adam(r->m.params, r->m.wact, r->m.grads, r->adam_m, r->adam_v, r->m.n_params,
                         (real)*lr, (real)s->train.beta1, (real)s->train.beta2,
                         (real)s->train.eps, (real)s->train.weight_decay, step + 1,
                         s->train.clip, &x);
    if (with_stats) {
        double clip = s->train.clip > 0 && *grad_norm > s->train.clip
                          ? s->train.clip / *grad_norm : 1;
        stats_grad_norms(&r->m, &r->stats, clip * x.grad_scale);
        stats_update_ratios(&r->m, r->before, &r->stats);
    }
    return sum;
}

/* Once, where the backend records (ops.h): whether the micro-batches
 * replay a recording of their ops, or why they run op by op. */
static void note_recording(struct run *r)
{
    const struct model *m = &r->m;
    if (r->told_recording || !m->ops->record_begin || (!m->rec.off && !m->rec.replays))
        return;
    r->told_recording = 1;
    if (m->rec.off)
        say(r, "micro-batches run op by op: %s", m->rec.why);
    else
        say(r, "micro-batches replay a recording of their ops (%s graph)", m->ops->name);
}

/* Once, where the backend chooses among attentions (ops.h): which one the
 * step ran, and why. */
static void note_attention(struct run *r)
{
    const char *c = r->m.ops->attention_choice ? r->m.ops->attention_choice() : NULL;
    if (r->told_attention || !c)
        return;
    r->told_attention = 1;
    say(r, "attention: %s", c);
}

/* A fault of the machine ends the run as an error that names what failed:
 * the device (a GPU's illegal address, a failed library call; its numbers
 * are not results, and divergence, which is one, must never be confused
 * with it), the gang's communication, or the disk refusing metrics.jsonl
 * (full: the points it could not keep would be missing from the curve). */
static int machine_fault(struct run *r, long step, char *err, size_t errlen)
{
    char why[900];
    if (r->m.ops->error(why, sizeof(why)) != 0)
        snprintf(err, errlen, "device fault on %s at step %ld: %s", r->m.ops->name, step, why);
    else if (r->comm->error(r->comm, why, sizeof(why)) != 0)
        snprintf(err, errlen, "the gang's communication failed at step %ld: %s", step, why);
    else if (r->log.err)
        snprintf(err, errlen, "%s: write failed at step %ld: %s", r->log.path, step,
                 strerror(r->log.err));
    else
        return 0;
    r->fault = 1;
    say(r, "%s", err);
    return -1;
}

/* The end-of-job analyses of analysis.prune / analysis.angular, over the
 * eval.tokens held-out tokens, into RUN/analysis/{prune,angular}.json and
 * as metrics at the final step: prune/delta_loss and prune/delta_ppl with
 * layer = the removed block; the angular matrix d(ℓ, n) as "angular/nK"
 * with layer = ℓ for each span K = n (metrics carry one layer index, so the
 * span goes in the name; d(ℓ, 1) is also layer/angular's measure). */
static int analyses(struct run *r, long step, char *err, size_t errlen)
{
    const struct job_spec *s = r->spec;
    char analysis_dir[4200];
    if (path_fmt(analysis_dir, sizeof(analysis_dir), err, errlen, "%s/analysis", r->out_dir))
        return -1;
    if (s->analysis_prune) {
        struct prune_result p;
        if (prune_run(&r->m, r->heldout, s->eval_tokens, PRUNE_REUSE, &p, err, errlen))
            return -1;
        for (int l = 1; l <= p.n_layers; l++) {
            emit(r, step, "prune/delta_loss", l, prune_delta_loss(&p, l));
            emit(r, step, "prune/delta_ppl", l, prune_delta_ppl(&p, l));
        }
        say(r, "prune: full loss %.4f; removing a block adds %.4f (block 1) … %.4f (block %d)",
            p.base_loss, prune_delta_loss(&p, 1), prune_delta_loss(&p, p.n_layers), p.n_layers);
        int rc = fio_write_json(prune_to_json(&p), analysis_dir, "prune.json", err, errlen);
        prune_free(&p);
        if (rc)
            return -1;
    }
    if (s->analysis_angular) {
        struct angular_result a;
        if (angular_run(&r->m, r->heldout, s->eval_tokens, &a, err, errlen))
            return -1;
        char name[32];
        for (int l = 1; l <= a.n_layers; l++)
            for (int n = 1; l + n - 1 <= a.n_layers; n++) {
                snprintf(name, sizeof(name), "angular/n%d", n);
                emit(r, step, name, l, angular_at(&a, l, n));
            }
        say(r, "angular: distance matrix over %lld tokens", (long long)a.tokens);
        int rc = fio_write_json(angular_to_json(&a), analysis_dir, "angular.json", err, errlen);
        angular_free(&a);
        if (rc)
            return -1;
    }
    if (r->hooks && r->hooks->analyses) {
        struct train_emit e = {r, emit_point, emit_line};
        return r->hooks->analyses(r->hooks->ctx, &r->m, step, &e, err, errlen);
    }
    return 0;
}

static void fmt_duration(char *buf, size_t n, double sec)
{
    long s = (long)(sec + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%ldh%02ldm", s / 3600, s / 60 % 60);
    else if (s >= 60)
        snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, n, "%lds", s);
}

int train_run(const struct job_spec *spec, const char *out_dir, const struct train_opts *opts,
              const struct train_hooks *hooks, char *err, size_t errlen)
{
    struct run r;
    memset(&r, 0, sizeof(r));
    r.spec = spec;
    r.opts = opts;
    r.hooks = hooks;
    r.out_dir = out_dir;
    r.m.ops = opts->ops;
    r.comm = opts->comm ? opts->comm : &comm_single;
    r.rank = r.comm->rank;
    r.world = r.comm->size;
    int rc = TRAIN_FAILED;
    long step = 0;
    if (setup(&r, err, errlen))
        goto out;
    /* every rank starts from the seed's weights, identical, unless rank 0 resumes */
    if (model_init_weights(&r.m, spec->train.seed, err, errlen))
        goto out;
    int resumed = resume_gang(&r, opts->resume, &step, err, errlen);
    if (resumed < 0 || machine_fault(&r, step, err, errlen))
        goto out;
    /* every rank reads the same start, so no broadcast is needed */
    if (!resumed && opts->init_from &&
        (opts->init_hf ? hf_load_weights(opts->init_from, &r.m, err, errlen)
                       : checkpoint_load_weights(opts->init_from, &r.m, err, errlen)))
        goto out;
    if (r.rank == 0 && metrics_log_open(&r.log, out_dir, resumed ? step : -1, err, errlen))
        goto out;
    char gang[48] = "";
    if (r.world > 1)
        snprintf(gang, sizeof gang, ", rank %d of %d", r.rank, r.world);
    say(&r, "%s: %s, norm %s, %.2fM parameters, %ld steps of %d × %d tokens on %s%s%s",
        spec->name, spec->model.preset, spec->norm.name, r.m.n_weights / 1e6, spec->train.steps,
        spec->train.batch_seqs, spec->train.seq_len, opts->ops->name, gang,
        resumed ? " (resumed)" : "");
    say(&r, "memory: %s", r.m.mem.said);
    if (resumed)
        say(&r, "resumed at step %ld", step);
    else if (opts->init_from)
        say(&r, "weights from %s (%s); the optimizer starts fresh", opts->init_from,
            opts->init_hf ? "a Hugging Face folder" : "a cod checkpoint");
    if (!resumed) {
        /* the data gave the steps of train.epochs: the server learns the run's length */
        if (spec->train.epochs > 0)
            emit(&r, 0, "train/steps", -1, (double)spec->train.steps);
        if (spec->eval_every > 0)
            evaluate(&r, 0);
        if (spec->stats_every > 0 && r.rank == 0)
            layer_stats(&r, 0, 0);
        if (machine_fault(&r, 0, err, errlen))
            goto out;
    }
    double last_print = now() - 1e9, started = now();
    /* the updates alone (not evaluations, statistics or checkpoints): their
     * time and the tokens and targets they took, for the run's last line */
    double busy = 0, busy_cpu = 0, taken = 0, learned = 0;
    long first_step = step;
    while (step < spec->train.steps) {
        int with_stats = r.rank == 0 && spec->stats_every > 0 &&
                         ((step + 1) % spec->stats_every == 0 || step + 1 == spec->train.steps);
        double t0 = now(), c0 = cpu_now(), gnorm, lr, count, inputs;
        double local = update(&r, step, with_stats, &count, &inputs, &gnorm, &lr);
        r.tokens += (long long)count;
        step++;
        if (machine_fault(&r, step, err, errlen))
            goto out;
        note_recording(&r);
        note_attention(&r);
        /* one collective a step: the loss, and whether any rank must stop */
        int want = hooks && hooks->should_stop ? hooks->should_stop(hooks->ctx) : TRAIN_GO_ON;
        double v[3] = {local, want == TRAIN_STOP_CHECKPOINT, want == TRAIN_STOP_ABANDON};
        r.comm->allreduce_host(r.comm, v, 3);
        if (machine_fault(&r, step, err, errlen))
            goto out;
        double loss = v[0] / count, dt = now() - t0;
        busy += dt;
        busy_cpu += cpu_now() - c0;
        taken += inputs;
        learned += count;
        int stop = v[2] > 0 ? TRAIN_STOP_ABANDON : v[1] > 0 ? TRAIN_STOP_CHECKPOINT : TRAIN_GO_ON;
        emit(&r, step, "train/loss", -1, loss);
        emit(&r, step, "train/lr", -1, lr);
        emit(&r, step, "train/grad_norm", -1, gnorm);
        emit(&r, step, "train/tokens_per_s", -1, inputs / dt);
        if (!isfinite(loss)) {
            snprintf(err, errlen, "diverged at step %ld", step);
            say(&r, "%s", err);
            goto out;
        }
        if (with_stats)
            layer_stats(&r, step, 1);
        if (spec->eval_every > 0 && (step % spec->eval_every == 0 || step == spec->train.steps))
            evaluate(&r, step);
        if (machine_fault(&r, step, err, errlen))
            goto out;
        double t = now();
        if (t - last_print >= opts->progress_seconds || step == spec->train.steps) {
            char eta[32];
            double rate = (t - started) / (double)(step - first_step);
            fmt_duration(eta, sizeof(eta), rate * (double)(spec->train.steps - step));
            say(&r, "step %ld/%ld | loss %.4f | lr %.2e | grad %.3f | %.0f tok/s | ETA %s", step,
                spec->train.steps, loss, lr, gnorm, inputs / dt, eta);
            last_print = t;
        }
        if (stop == TRAIN_STOP_ABANDON) {
            say(&r, "abandoned at step %ld without a checkpoint", step);
            rc = TRAIN_STOPPED;
            goto out;
        }
        if (stop || step == spec->train.steps ||
            (spec->checkpoint_every > 0 && step % spec->checkpoint_every == 0)) {
            if (save(&r, step, err, errlen))
                goto out;
        }
        if (stop) {
            say(&r, "stopped at step %ld", step);
            rc = TRAIN_STOPPED;
            goto out;
        }
    }
    if (step > first_step && busy > 0)
        say(&r, "%ld updates in %.3f s (%.3f s of processor time): %.0f tokens/s, %.0f targets/s",
            step - first_step, busy, busy_cpu, taken / busy, learned / busy);
    if ((r.rank == 0 && analyses(&r, step, err, errlen)) || machine_fault(&r, step, err, errlen))
        goto out;
    rc = TRAIN_DONE;
out:
    teardown(&r);
    return rc == TRAIN_FAILED && r.fault ? TRAIN_FAULT : rc;
}
