/* Heartbeats and batched reports from the run's files: see reporter.h. */
#include "worker/reporter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/http_client.h"
#include "common/path.h"
#include "common/realtime.h"
#include "worker/backoff.h"
#include "worker/runlog.h"
#include "worker/tail.h"

enum { MAX_POINTS = 5000, MAX_LINES = 1000 };
enum { SENT_ALL = 1, SEND_LATER = -1, SEND_STOP = -2 };

struct reporter {
    struct reporter_cfg cfg;
    struct http_client *http;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct tail metrics, logs;
    long step;
    int metrics_ready, flags, draining, all_sent;
    int unreachable;  /* reports are waiting for the server */
    double backoff;
    int max_points, max_lines;  /* per batch: halved while the server finds batches too large */
    char refusal[512];          /* the server's words when it refused a batch */
};

static void now_unreachable(struct reporter *rp, const char *why)
{
    if (!rp->unreachable)
        runlog_printf("server unreachable (%s): training goes on, reports wait on disk", why);
    rp->unreachable = 1;
}

static void now_reachable(struct reporter *rp)
{
    if (rp->unreachable)
        runlog_printf("server reachable again: sending the reports that waited");
    rp->unreachable = 0;
    rp->backoff = 0;
}

/* POSTs body to /v1/runs/{run}/{what}; returns the status, or 0 when the
 * server did not take the request: not reached, the connection cut, 5xx,
 * 408 or 429. Nothing such an answer concerns was stored. */
static long post(struct reporter *rp, const char *what, json_t *body, double timeout,
                 struct http_response *res)
{
    char path[96], err[512];
    snprintf(path, sizeof path, "/v1/runs/%lld/%s", (long long)rp->cfg.run, what);
    if (http_request(rp->http, "POST", path, body, timeout, res, err, sizeof err) != 0) {
        now_unreachable(rp, err);
        return 0;
    }
    if (res->status >= 500 || res->status == 408 || res->status == 429) {
        char text[512];
        http_error_text(res, text, sizeof text);
        now_unreachable(rp, text);
        return 0;
    }
    now_reachable(rp);
    return res->status;
}

/* A batch the server answered with a refusal other than a lost lease
 * (400, 401, 413 for a single line, 422): it would refuse it again. The
 * points were not stored, so the run cannot succeed: the reporter stops and
 * the job fails with the server's words. */
static void refuse(struct reporter *rp, const struct http_response *res, int nm, int nl)
{
    char text[400];
    http_error_text(res, text, sizeof text);
    runlog_printf("the server refused %d points and %d log lines (%s): stopping", nm, nl, text);
    pthread_mutex_lock(&rp->mu);
    snprintf(rp->refusal, sizeof rp->refusal, "%s", text);
    rp->flags |= REPORT_REFUSED;
    pthread_mutex_unlock(&rp->mu);
}

static void lose(struct reporter *rp, const struct http_response *res)
{
    char text[512];
    http_error_text(res, text, sizeof text);
    runlog_printf("the server took the lease back (%s): stopping without a checkpoint", text);
    pthread_mutex_lock(&rp->mu);
    rp->flags |= REPORT_LOST;
    pthread_mutex_unlock(&rp->mu);
}

static int heartbeat(struct reporter *rp, long step)
{
    struct http_response res;
    json_t *body = json_pack("{s:I,s:i}", "step", (json_int_t)step, "rank", rp->cfg.rank);
    long status = body ? post(rp, "heartbeat", body, 10, &res) : 0;
    int rc = status == 200 ? 0 : -1;
    if (status == 200 && json_is_true(json_object_get(res.json, "cancel"))) {
        runlog_printf("cancelled by the server: stopping at a checkpoint");
        pthread_mutex_lock(&rp->mu);
        rp->flags |= REPORT_CANCEL;
        pthread_mutex_unlock(&rp->mu);
    } else if (status == 409 || status == 404 || status == 403) {
        lose(rp, &res);
    } else if (status && status != 200) {
        char text[512];
        http_error_text(&res, text, sizeof text);
        runlog_printf("heartbeat refused: %s", text);
    }
    json_decref(body);
    http_response_clear(&res);
    return rc;
}

/* Appends the points in buf (metrics.jsonl lines) to arr. */
static int add_points(json_t *arr, char *buf)
{
    for (char *line = buf, *nl; line && *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        json_t *p = json_loads(line, 0, NULL);
        if (!p || json_array_append_new(arr, p) != 0)
            return -1;
    }
    return 0;
}

/* The server keeps a log line of at most this many bytes (docs/api.md):
 * a longer one is cut, at a character's start, rather than have the
 * server refuse its batch. */
enum { LOG_LINE_MAX = 16384 };

static int add_lines(json_t *arr, char *buf, long first_seq)
{
    long seq = first_seq;
    for (char *line = buf, *nl; line && *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        size_t len = strlen(line);
        if (len > LOG_LINE_MAX) {
            len = LOG_LINE_MAX;
            while (len && ((unsigned char)line[len] & 0xc0) == 0x80)
                len--;
            line[len] = '\0';
        }
        if (json_array_append_new(arr, json_pack("{s:I,s:s}", "seq", (json_int_t)seq++, "line",
                                                 line)) != 0)
            return -1;
    }
    return 0;
}

/* Not synced: a record lost in a crash only makes a resume send points the
 * server already holds, which it keys and keeps once. */
static int write_acked(const char *path, long offset)
{
    char tmp[4200];
    if (path_fmt(tmp, sizeof tmp, NULL, 0, "%s.tmp", path) != 0)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int bad = fprintf(f, "%ld\n", offset) < 0;
    bad |= fclose(f) != 0;
    return bad || rename(tmp, path) != 0 ? -1 : 0;
}

/* Sends every whole line not yet acknowledged, batch after batch. */
static int send_pending(struct reporter *rp, int metrics_ready)
{
    char err[512];
    for (;;) {
        char *mbuf = NULL, *lbuf = NULL;
        int nm = 0, nl = 0;
        long bm = 0, bl = 0;
        if ((metrics_ready &&
             tail_read(&rp->metrics, rp->max_points, &mbuf, &nm, &bm, err, sizeof err) != 0) ||
            tail_read(&rp->logs, rp->max_lines, &lbuf, &nl, &bl, err, sizeof err) != 0) {
            runlog_printf("reading reports: %s", err);
            free(mbuf);
            return SEND_LATER;
        }
        if (!nm && !nl) {
            free(mbuf);
            free(lbuf);
            return SENT_ALL;
        }
        json_t *points = json_array(), *lines = json_array();
        json_t *body = json_pack("{s:o,s:o}", "points", points, "logs", lines);
        int bad = !body || add_points(points, mbuf) != 0 || add_lines(lines, lbuf, rp->logs.lines);
        free(mbuf);
        free(lbuf);
        if (bad) {
            json_decref(body);
            runlog_printf("a report batch could not be built (out of memory or a torn line)");
            return SEND_LATER;
        }
        struct http_response res;
        long status = post(rp, "metrics", body, 30, &res);
        json_decref(body);
        if (status == 413 && (rp->max_points > 1 || rp->max_lines > 1)) {
            /* The server's --max-body is below a whole batch. */
            http_response_clear(&res);
            rp->max_points = (rp->max_points + 1) / 2;
            rp->max_lines = (rp->max_lines + 1) / 2;
            runlog_printf("the server found a report too large: sending at most %d points and "
                          "%d log lines at a time", rp->max_points, rp->max_lines);
            continue;
        }
        /* Only a 200 says the batch is stored: anything else sends it again or stops. */
        if (status != 200) {
            if (status == 409 || status == 404 || status == 403)
                lose(rp, &res);
            else if (status)
                refuse(rp, &res, nm, nl);
            http_response_clear(&res);
            return status ? SEND_STOP : SEND_LATER;
        }
        http_response_clear(&res);
        tail_advance(&rp->metrics, nm, bm);
        tail_advance(&rp->logs, nl, bl);
        if (nm && write_acked(rp->cfg.acked_path, rp->metrics.offset) != 0)
            runlog_printf("cannot record the delivered length in %s: a resume may send "
                          "some points again", rp->cfg.acked_path);
    }
}

static void wait_until(struct reporter *rp, double t)
{
    double now = runlog_now();
    if (t <= now)
        return;
    struct timespec ts = realtime_after(t - now);
    pthread_cond_timedwait(&rp->cv, &rp->mu, &ts);
}

static void *loop(void *arg)
{
    struct reporter *rp = arg;
    double next_hb = runlog_now() + rp->cfg.heartbeat_s, next_flush = runlog_now();
    pthread_mutex_lock(&rp->mu);
    while (!rp->flags && !*rp->cfg.stop_now) {
        double now = runlog_now();
        if (now >= next_hb) {
            long step = rp->step;
            pthread_mutex_unlock(&rp->mu);
            int ok = heartbeat(rp, step) == 0;
            pthread_mutex_lock(&rp->mu);
            next_hb = runlog_now() +
                      (ok ? rp->cfg.heartbeat_s : backoff_next(&rp->backoff));
            continue;
        }
        if (rp->draining || now >= next_flush) {
            int ready = rp->metrics_ready, draining = rp->draining;
            pthread_mutex_unlock(&rp->mu);
            int rc = rp->cfg.rank == 0 ? send_pending(rp, ready) : SENT_ALL;
            pthread_mutex_lock(&rp->mu);
            if (rc == SENT_ALL && draining) {
                rp->all_sent = 1;
                break;
            }
            next_flush = runlog_now() +
                         (rc == SEND_LATER ? backoff_next(&rp->backoff) : rp->cfg.flush_s);
            if (!draining || rc == SEND_LATER)
                wait_until(rp, next_flush < next_hb ? next_flush : next_hb);
            continue;
        }
        wait_until(rp, next_flush < next_hb ? next_flush : next_hb);
    }
    pthread_mutex_unlock(&rp->mu);
    return NULL;
}

int reporter_start(const struct reporter_cfg *cfg, struct reporter **out, char *err, size_t errlen)
{
    struct reporter *rp = calloc(1, sizeof *rp);
    if (!rp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rp->cfg = *cfg;
    rp->max_points = MAX_POINTS;
    rp->max_lines = MAX_LINES;
    if (tail_init(&rp->metrics, cfg->metrics_path, err, errlen) ||
        tail_init(&rp->logs, cfg->log_path, err, errlen)) {
        free(rp);
        return -1;
    }
    rp->metrics.offset = cfg->metrics_start;
    rp->http = http_client_new(cfg->server, cfg->token, err, errlen);
    if (!rp->http || (cfg->lease_secret && http_client_set_header(rp->http, "Cod-Lease-Secret",
                                                                   cfg->lease_secret, err,
                                                                   errlen) != 0)) {
        http_client_free(rp->http);
        free(rp);
        return -1;
    }
    http_client_set_abort(rp->http, cfg->stop_now);
    pthread_mutex_init(&rp->mu, NULL);
    pthread_cond_init(&rp->cv, NULL);
    int e = pthread_create(&rp->thread, NULL, loop, rp);
    if (e != 0) {
        snprintf(err, errlen, "cannot start the reporter thread: %s", strerror(e));
        http_client_free(rp->http);
        free(rp);
        return -1;
    }
    *out = rp;
    return 0;
}

void reporter_note_step(struct reporter *rp, long step)
{
    pthread_mutex_lock(&rp->mu);
    if (step > rp->step)
        rp->step = step;
    rp->metrics_ready = 1;
    pthread_mutex_unlock(&rp->mu);
}

int reporter_flags(struct reporter *rp)
{
    pthread_mutex_lock(&rp->mu);
    int f = rp->flags;
    pthread_mutex_unlock(&rp->mu);
    return f;
}

void reporter_refusal(struct reporter *rp, char *buf, size_t len)
{
    pthread_mutex_lock(&rp->mu);
    snprintf(buf, len, "%s", rp->refusal);
    pthread_mutex_unlock(&rp->mu);
}

int reporter_drain(struct reporter *rp)
{
    pthread_mutex_lock(&rp->mu);
    rp->draining = 1;
    /* The trainer is done with metrics.jsonl, whether or not it wrote a
     * point in this run: a run resumed at its final checkpoint writes none,
     * yet what earlier runs left unsent must go now. */
    rp->metrics_ready = 1;
    pthread_cond_signal(&rp->cv);
    pthread_mutex_unlock(&rp->mu);
    pthread_join(rp->thread, NULL);
    return rp->all_sent ? 0 : -1;
}

void reporter_free(struct reporter *rp)
{
    if (!rp)
        return;
    pthread_mutex_destroy(&rp->mu);
    pthread_cond_destroy(&rp->cv);
    http_client_free(rp->http);
    free(rp);
}
