/* One leased job: see job.h. */
#include "worker/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"
#include "eval/job.h"
#include "sft/prepare.h"
#include "spec/spec.h"
#include "trainer/checkpoint.h"
#include "trainer/data_check.h"
#include "trainer/train.h"
#include "worker/backoff.h"
#include "worker/gang.h"
#include "worker/reporter.h"
#include "worker/runlog.h"
#include "worker/tail.h"

struct job {
    const struct job_ctx *ctx;
    struct reporter *rp;
    double leased_at;
    int first_update_seen;
    const struct job_spec *spec;
    const char *dir;
    const struct eval_text_source *text; /* a start's tokenizer (sft/prepare.h) */
};

static void on_metric(void *arg, long step, const char *name, int layer, double value)
{
    (void)layer, (void)value;
    struct job *j = arg;
    reporter_note_step(j->rp, step);
    if (!j->first_update_seen && !strcmp(name, "train/loss")) {
        j->first_update_seen = 1;
        runlog_printf("first update done %.3f s after the lease", runlog_now() - j->leased_at);
    }
}

static void on_log(void *arg, const char *line)
{
    (void)arg;
    runlog_printf("%s", line);
}

/* analysis.tasks on the trained model (eval/job.h) */
static int analyses(void *arg, struct model *m, long step, const struct train_emit *e, char *err,
                    size_t errlen)
{
    struct job *j = arg;
    return eval_job_run(m, j->spec, j->text, j->dir, step, e, err, errlen);
}

/* The gang's waits give up once the run is gone or the worker must stop now. */
static int gang_abort(void *arg)
{
    struct job *j = arg;
    return (reporter_flags(j->rp) & REPORT_LOST) || *j->ctx->stop_now;
}

static int should_stop(void *arg)
{
    struct job *j = arg;
    int f = reporter_flags(j->rp);
    if (f & REPORT_LOST)
        return TRAIN_STOP_ABANDON;
    return (f & (REPORT_CANCEL | REPORT_REFUSED)) || *j->ctx->stop ? TRAIN_STOP_CHECKPOINT
                                                                    : TRAIN_GO_ON;
}

/* Where a resumed run starts sending metrics.jsonl: what an earlier run
 * had delivered, within the lines the resume keeps (steps up to the
 * checkpoint's; the trainer rewrites the rest, so it is sent again). */
static long already_delivered(const char *metrics_path, const char *acked_path, const char *ck,
                              long *points)
{
    const char *base = strrchr(ck, '/');
    long step, acked = 0, keep = 0;
    *points = 0;
    if (!base || sscanf(base + 1, "step_%ld", &step) != 1)
        return 0;
    FILE *f = fopen(acked_path, "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld", &acked) != 1)
        acked = 0;
    fclose(f);
    if (!(f = fopen(metrics_path, "r")))
        return 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long at = 0, s;
    /* lines come in step order: the kept prefix ends at the first later step */
    while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n' &&
           sscanf(line, "{\"step\": %ld", &s) == 1 && s <= step) {
        at += (long)n;
        if (at <= acked)
            (*points)++;
        keep = at;
    }
    free(line);
    fclose(f);
    return acked < keep ? acked : keep;
}

/* What a rank tells the server at the end of its run. */
struct told {
    long long run;
    int rank;
    int retry; /* with "failed": the machine failed, not the experiment */
};

/* Tells the server the outcome, retrying while it cannot be reached (until
 * a second signal). points >= 0 goes with "succeeded": the points
 * metrics.jsonl holds, which the server must hold too. Returns the outcome
 * told, "incomplete" when the server lacks points, "lost" when it refused
 * otherwise, "abandoned" when it was never reached. */
static const char *finish(const struct job_ctx *ctx, struct http_client *http,
                          const struct told *t, const char *outcome, const char *reason,
                          long points)
{
    char path[96], err[512];
    snprintf(path, sizeof path, "/v1/runs/%lld/finish", t->run);
    json_t *body = json_pack("{s:s,s:i,s:b}", "outcome", outcome, "rank", t->rank, "retry",
                             t->retry && !strcmp(outcome, "failed"));
    if (!body || (reason && json_object_set_new(body, "reason", json_string(reason)) != 0) ||
        (points >= 0 && json_object_set_new(body, "points", json_integer(points)) != 0)) {
        json_decref(body);
        body = NULL;
    }
    double delay = 0;
    const char *told = "abandoned";
    while (body && !*ctx->stop_now) {
        struct http_response res;
        int rc = http_request(http, "POST", path, body, 30, &res, err, sizeof err);
        if (rc == 0 && res.status == 200) {
            told = outcome;
        } else if (rc == 0 && res.status < 500) {
            const char *code = json_string_value(
                json_object_get(json_object_get(res.json, "error"), "code"));
            http_error_text(&res, err, sizeof err);
            runlog_printf("finish (%s) refused: %s", outcome, err);
            told = code && !strcmp(code, "points_missing") ? "incomplete" : "lost";
        }
        int retry = rc != 0 || res.status >= 500;
        http_response_clear(&res);
        if (!retry)
            break;
        double wait = backoff_next(&delay);
        runlog_printf("finish (%s) not delivered (%s); retrying in %.1f s", outcome, err, wait);
        usleep((useconds_t)(wait * 1e6));
    }
    json_decref(body);
    return told;
}

/* Sends the run's files from metrics offset `start` to their end, with a
 * reporter of its own; 0 when all was stored. */
static int deliver_again(const struct reporter_cfg *base, long start)
{
    struct reporter_cfg cfg = *base;
    struct reporter *rp;
    char err[512];
    cfg.metrics_start = start;
    if (reporter_start(&cfg, &rp, err, sizeof err) != 0) {
        runlog_printf("%s", err);
        return -1;
    }
    int rc = reporter_drain(rp);
    reporter_free(rp);
    return rc;
}

/* Finishes a run whose reports were all stored. When the server still lacks
 * points of the run (a delivery record that was wrong, whatever made it so),
 * metrics.jsonl is sent again from its first line and finish is asked once
 * more; a run the server still finds incomplete fails, saying so. */
static const char *finish_delivered(const struct job_ctx *ctx, struct http_client *http,
                                    const struct reporter_cfg *rc, const struct told *t,
                                    const char *outcome, const char *reason)
{
    int success = !strcmp(outcome, "succeeded");
    long points = success ? tail_count_lines(rc->metrics_path) : -1;
    const char *told = finish(ctx, http, t, outcome, reason, points);
    if (strcmp(told, "incomplete"))
        return told;
    runlog_printf("sending every point of %s again", rc->metrics_path);
    if (deliver_again(rc, 0) != 0)
        return "abandoned";
    told = finish(ctx, http, t, outcome, reason, points);
    if (strcmp(told, "incomplete"))
        return told;
    return finish(ctx, http, t, "failed",
                  "the server lacks metric points of the run even after they were all sent again",
                  -1);
}

/* A rank other than 0 that failed waits a lease for rank 0 to end the run
 * (a failure all ranks share, divergence say, is rank 0's to report); the
 * run still there after that is ended by this rank's own failure. 1 when
 * rank 0 ended it. */
static int ended_by_rank0(const struct job *j, double lease_s)
{
    double until = runlog_now() + (lease_s > 0 ? lease_s : 60);
    while (runlog_now() < until && !*j->ctx->stop_now) {
        if (reporter_flags(j->rp) & REPORT_LOST)
            return 1;
        usleep(100000);
    }
    return 0;
}

static const char *run_job(const struct job_ctx *ctx, struct http_client *http, json_t *lease)
{
    struct job j = {.ctx = ctx, .leased_at = runlog_now()};
    http_client_set_abort(http, (volatile const int *)ctx->stop_now);
    long long run = json_integer_value(json_object_get(lease, "run"));
    long long exp = json_integer_value(json_object_get(lease, "experiment"));
    int attempt = (int)json_integer_value(json_object_get(lease, "attempt"));
    double lease_s = json_number_value(json_object_get(lease, "lease_seconds"));
    json_t *w = json_object_get(lease, "world_size");
    int rank = (int)json_integer_value(json_object_get(lease, "rank"));
    int world = w ? (int)json_integer_value(w) : 1;
    struct told t = {run, rank, 0};
    const char *secret = json_string_value(json_object_get(lease, "secret"));
    char dir[4096], logs[4200], log_path[4300], metrics_path[4200], acked_path[4200], ck[4400],
        err[1024], rank_part[32] = "";
    char reason[1200] = "";
    /* each rank of a gang keeps its own log beside rank 0's */
    if (rank > 0)
        snprintf(rank_part, sizeof rank_part, ".rank%d", rank);
    if (path_fmt(dir, sizeof dir, err, sizeof err, "%s/experiments/%lld", ctx->work_dir, exp) ||
        path_fmt(logs, sizeof logs, err, sizeof err, "%s/logs", dir) ||
        path_fmt(log_path, sizeof log_path, err, sizeof err, "%s/run-%lld%s.log", logs, run,
                 rank_part) ||
        path_fmt(metrics_path, sizeof metrics_path, err, sizeof err, "%s/metrics.jsonl", dir) ||
        path_fmt(acked_path, sizeof acked_path, err, sizeof err, "%s/metrics.delivered", dir) ||
        fio_mkdir_p(logs, err, sizeof err) != 0 || runlog_open(log_path, exp, err, sizeof err)) {
        snprintf(reason, sizeof reason, "worker cannot write its work dir: %s", err);
        runlog_printf("run %lld: %s", run, reason);
        t.retry = 1;
        return finish(ctx, http, &t, "failed", reason, -1);
    }
    double hb = ctx->heartbeat_s;
    if (lease_s > 0 && hb > lease_s / 3)
        hb = lease_s / 3;
    /* rank 0 alone resumes (the trainer hands its state to the others) and
     * keeps the record of what was delivered */
    int resume = rank == 0 ? checkpoint_latest(dir, ck, sizeof ck, err, sizeof err) : 0;
    long sent_before = 0, start = 0;
    if (resume < 0)
        snprintf(reason, sizeof reason, "%s", err);
    else if (resume)
        start = already_delivered(metrics_path, acked_path, ck, &sent_before);
    struct reporter_cfg rc = {.server = ctx->server, .token = ctx->token,
                              .lease_secret = secret, .run = run, .rank = rank,
                              .metrics_path = metrics_path, .log_path = log_path,
                              .acked_path = acked_path, .metrics_start = start,
                              .heartbeat_s = hb, .flush_s = ctx->flush_s,
                              .stop_now = (volatile const int *)ctx->stop_now};
    if (resume != 1 && rank == 0)
        unlink(acked_path); /* a fresh start rewrites every point */
    if (reporter_start(&rc, &j.rp, err, sizeof err) != 0) {
        runlog_printf("run %lld: %s", run, err);
        runlog_close();
        t.retry = 1;
        return finish(ctx, http, &t, "failed", err, -1);
    }
    if (world > 1)
        runlog_printf("leased run %lld (attempt %d) of experiment %lld as rank %d of %d; "
                      "directory %s", run, attempt, exp, rank, world, dir);
    else
        runlog_printf("leased run %lld (attempt %d) of experiment %lld; directory %s", run,
                      attempt, exp, dir);
    const char *outcome = "failed";
    json_t *spec_json = json_object_get(lease, "spec");
    struct job_spec spec;
    struct spec_error se;
    struct comm *comm = NULL;
    int lost = 0;
    struct train_opts opts = {.ops = ctx->ops, .resume = resume, .progress_seconds = 5};
    static struct sft_prepared prep;
    if (!reason[0] && !spec_json) {
        snprintf(reason, sizeof reason, "the lease carried no spec");
    } else if (!reason[0] && spec_from_json(spec_json, &spec, &se)) {
        snprintf(reason, sizeof reason, "%s%s%s", se.field, se.field[0] ? ": " : "", se.message);
    } else if (!reason[0] && sft_prepare(&spec, ctx->work_dir, dir, rank, &prep, &opts, err,
                                         sizeof err)) {
        snprintf(reason, sizeof reason, "%s", err);
    } else if (!reason[0] && spec_check_data(&spec, &se)) {
        snprintf(reason, sizeof reason, "%s%s%s", se.field, se.field[0] ? ": " : "", se.message);
        /* this machine's data, not the experiment, when another rank has it */
        t.retry = world > 1 && !strcmp(se.field, "data");
    } else if (!reason[0] && rank == 0 && eval_job_check(&spec, &prep.text, err, sizeof err)) {
        snprintf(reason, sizeof reason, "%s", err);
    } else if (!reason[0] && (world > 1 || ctx->nccl_always) &&
               !(comm = gang_join(&(struct gang_cfg){run, rank, world, gang_abort, &j}, http,
                                  &lost, err, sizeof err))) {
        snprintf(reason, sizeof reason, "rank %d of %d could not join its gang: %s", rank, world,
                 err);
        t.retry = 1;
        outcome = lost ? "lost" : "failed";
    } else if (!reason[0]) {
        if (resume)
            runlog_printf("resuming from %s (%ld metric points already delivered)", ck,
                          sent_before);
        if (prep.summary[0])
            runlog_printf("%s", prep.summary);
        opts.comm = comm;
        j.spec = &spec;
        j.dir = dir;
        j.text = &prep.text;
        struct train_hooks hooks = {.ctx = &j, .metric = on_metric, .log = on_log,
                                    .should_stop = should_stop, .analyses = analyses};
        int r = train_run(&spec, dir, &opts, &hooks, err, sizeof err);
        int f = reporter_flags(j.rp);
        if (r == TRAIN_DONE)
            outcome = "succeeded";
        else if (r == TRAIN_FAILED || r == TRAIN_FAULT)
            snprintf(reason, sizeof reason, "%s", err);
        else
            outcome = f & REPORT_LOST       ? "lost"
                      : f & REPORT_REFUSED  ? "failed"
                      : f & REPORT_CANCEL   ? "cancelled"
                                            : "released";
        t.retry = r == TRAIN_FAULT;
    }
    gang_leave(comm);
    if (!strcmp(outcome, "failed") && reason[0])
        runlog_printf("failed: %s", reason);
    /* rank 0 says what became of the experiment; another rank's own words
     * are for its failures, once rank 0 has let a lease pass */
    int rank0_ended = rank > 0 && !strcmp(outcome, "failed") && !t.retry &&
                      ended_by_rank0(&j, lease_s);
    runlog_close();
    int delivered = reporter_drain(j.rp) == 0;
    int flags = reporter_flags(j.rp);
    if (flags & REPORT_REFUSED) {
        char why[600];
        reporter_refusal(j.rp, why, sizeof why);
        outcome = "failed";
        snprintf(reason, sizeof reason, "the server refused the run's reports: %s", why);
    }
    reporter_free(j.rp);
    if ((flags & REPORT_LOST) || rank0_ended)
        return "lost";
    if (!strcmp(outcome, "cancelled") || !strcmp(outcome, "lost"))
        return outcome;
    if (rank > 0 && (!strcmp(outcome, "succeeded") || !strcmp(outcome, "cancelled")))
        return outcome; /* rank 0 tells it */
    if (!delivered && !(flags & REPORT_REFUSED))
        /* Only a second signal stops delivery. The lines stay on disk and the
         * lease lapses, so whoever resumes the experiment sends them; it must
         * not be marked finished without them. */
        return "abandoned";
    return finish_delivered(ctx, http, &rc, &t, outcome, reason[0] ? reason : NULL);
}

const char *job_run(const struct job_ctx *ctx, struct http_client *http, json_t *lease)
{
    /* the run's calls carry its rank's secret (an older server gives none);
     * the worker's own calls after it do not */
    char err[256];
    const char *secret = json_string_value(json_object_get(lease, "secret"));
    if (http_client_set_header(http, "Cod-Lease-Secret", secret, err, sizeof err) != 0) {
        runlog_printf("run %lld: %s", (long long)json_integer_value(json_object_get(lease, "run")),
                      err);
        return "abandoned";
    }
    const char *outcome = run_job(ctx, http, lease);
    if (http_client_set_header(http, "Cod-Lease-Secret", NULL, err, sizeof err) != 0)
        runlog_printf("%s", err);
    return outcome;
}
