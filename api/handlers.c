/* Client endpoints: experiments, sweeps, series, logs, workers, health,
 * /metrics and the dashboard. */
#include "api/handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/static.h"
#include "api/submit.h"
#include "views/experiment.h"
#include "views/sweep.h"
#include "views/workers.h"

enum MHD_Result h_dashboard(struct req *r, int64_t id)
{
    (void)id;
    return static_reply(r, "index.html");
}

enum MHD_Result h_healthz(struct req *r, int64_t id)
{
    (void)id;
    return reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

enum MHD_Result h_readyz(struct req *r, int64_t id)
{
    (void)id;
    json_t *o;
    int rc = views_counts(r->app->store, 1e9, &o);
    if (rc != ST_OK || r->app->stopping) {
        if (rc == ST_OK)
            json_decref(o);
        return reply_error(r, 503, "not_ready", NULL, "%s",
                           r->app->stopping ? "stopping" : "the database is not readable");
    }
    json_decref(o);
    return reply_json(r, 200, json_pack("{s:s}", "status", "ready"));
}

enum MHD_Result h_prometheus(struct req *r, int64_t id)
{
    (void)id;
    json_t *stats;
    int rc = views_counts(r->app->store, r->app->lease_s, &stats);
    if (rc != ST_OK)
        return reply_store(r, rc, "stats");
    pthread_mutex_lock(&r->app->lock);
    int parked = r->app->n_waiters;
    long woken = r->app->resumed_for_work;
    pthread_mutex_unlock(&r->app->lock);
    char *text = json_object_set_new(stats, "parked", json_integer(parked)) == 0 &&
                         json_object_set_new(stats, "woken", json_integer(woken)) == 0
                     ? prom_render(&r->app->stats, stats)
                     : NULL;
    json_decref(stats);
    if (!text)
        return reply_error(r, 500, "internal", NULL, "out of memory");
    enum MHD_Result ret =
        reply_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text));
    free(text);
    return ret;
}

/* New queued work wakes as many parked lease polls as there are jobs, of
 * workers that can take them; a gang wakes every parked poll, since its
 * ranks are gathered from the passes of the cuda workers waiting. */
static void wake_for_new(struct app *app, const struct new_experiment *rows, int n)
{
    int count[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        if (rows[i].gpus > 1) {
            longpoll_wake(app);
            return;
        }
        const char *dev = rows[i].device;
        count[!strcmp(dev, "cpu") ? FOR_CPU : !strcmp(dev, "cuda") ? FOR_CUDA : FOR_ANY]++;
    }
    for (int k = 0; k < 3; k++)
        if (count[k])
            longpoll_wake_for(app, (enum wake_for)k, count[k] + 1);
}

static enum MHD_Result show(struct req *r, int status, int64_t id)
{
    json_t *o;
    int rc = views_experiment(r->app->store, id, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return reply_json(r, status, o);
}

static const char *idem_key(struct req *r)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Idempotency-Key");
}

/* A retry must be the same request: a key reused for another one is a
 * client bug that would otherwise silently drop the second submission. */
static enum MHD_Result idem_reused(struct req *r, const char *what)
{
    return reply_error(r, 422, "idempotency_key_reused", NULL,
                       "this Idempotency-Key was already used for a different %s request", what);
}

/* A submission the store refused for what it waits for: the first id of
 * after that names no experiment, or (none) a chain that would close. */
static enum MHD_Result unknown_after(struct req *r, const struct new_experiment *e)
{
    for (int i = 0; i < e->n_after; i++) {
        json_t *o;
        int rc = views_experiment(r->app->store, e->after[i], &o);
        if (rc == ST_OK)
            json_decref(o);
        else if (rc == ST_NOTFOUND)
            return reply_error(r, 422, "invalid_spec", "after",
                               "experiment %lld does not exist (an experiment waits only for "
                               "ones submitted before it)",
                               (long long)e->after[i]);
    }
    return reply_error(r, 422, "invalid_spec", "after",
                       "the experiments it waits for would wait for it: a chain may not close "
                       "on itself");
}

enum MHD_Result h_create_experiment(struct req *r, int64_t unused)
{
    (void)unused;
    enum MHD_Result ret;
    json_t *body = body_object(r, 0, &ret);
    if (!body)
        return ret;
    struct submission s;
    struct spec_error err;
    int ok = submission_from_json(body, &r->app->submit, &s, &err) == 0;
    json_decref(body);
    if (!ok) {
        submission_free(&s);
        return reply_error(r, 422, "invalid_spec", err.field, "%s", err.message);
    }
    int64_t id;
    int replayed;
    int rc = store_create_experiment(r->app->store, &s.row, idem_key(r), &id, &replayed);
    if (rc == ST_OK && !replayed)
        wake_for_new(r->app, &s.row, 1);
    if (rc == ST_INVALID) {
        enum MHD_Result ret = unknown_after(r, &s.row);
        submission_free(&s);
        return ret;
    }
    submission_free(&s);
    if (rc == ST_CONFLICT)
        return idem_reused(r, "experiment");
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return show(r, 201, id);
}

enum MHD_Result h_create_sweep(struct req *r, int64_t unused)
{
    (void)unused;
    enum MHD_Result ret;
    json_t *body = body_object(r, 0, &ret);
    if (!body)
        return ret;
    struct submission *subs;
    int n;
    struct spec_error err;
    if (sweep_expand(body, &r->app->submit, &subs, &n, &err) != 0) {
        json_decref(body);
        return reply_error(r, 422, "invalid_sweep", err.field, "%s", err.message);
    }
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    struct new_experiment *rows = malloc((size_t)n * sizeof *rows);
    if (!text || !rows) {
        free(text);
        free(rows);
        submissions_free(subs, n);
        return reply_error(r, 500, "internal", NULL, "out of memory");
    }
    for (int i = 0; i < n; i++)
        rows[i] = subs[i].row;
    int64_t sweep;
    int replayed;
    int rc = store_create_sweep(r->app->store, text, idem_key(r), rows, n, &sweep, &replayed);
    if (rc == ST_OK && !replayed)
        wake_for_new(r->app, rows, n);
    for (int i = 0; rc == ST_INVALID && i < n; i++)
        if (rows[i].n_after) {
            enum MHD_Result ret = unknown_after(r, &rows[i]);
            free(text);
            free(rows);
            submissions_free(subs, n);
            return ret;
        }
    free(text);
    free(rows);
    submissions_free(subs, n);
    if (rc == ST_CONFLICT)
        return idem_reused(r, "sweep");
    if (rc != ST_OK)
        return reply_store(r, rc, "sweep");
    json_t *o;
    rc = views_sweep(r->app->store, sweep, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "sweep");
    return reply_json(r, 201, o);
}

enum MHD_Result h_show_sweep(struct req *r, int64_t id)
{
    json_t *o;
    int rc = views_sweep(r->app->store, id, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "sweep");
    return reply_json(r, 200, o);
}

static int known_state(const char *s)
{
    static const char *const states[] = {"waiting", "queued",    "running", "succeeded",
                                         "failed",  "cancelled", "blocked"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(s, states[i]))
            return 1;
    return 0;
}

enum MHD_Result h_list_experiments(struct req *r, int64_t unused)
{
    (void)unused;
    enum MHD_Result ret;
    struct exp_filter f = {query_str(r, "state"), query_str(r, "norm"), query_str(r, "model"), 0,
                           0, 0};
    long sweep, cursor, limit;
    if (query_long(r, "sweep", 0, 1, 1L << 62, &sweep, &ret) != 0 ||
        query_long(r, "cursor", 0, 1, 1L << 62, &cursor, &ret) != 0 ||
        query_long(r, "limit", 50, 1, 1000, &limit, &ret) != 0)
        return ret;
    if (f.state && !known_state(f.state))
        return reply_error(r, 400, "bad_query", "state",
                           "state must be waiting, queued, running, succeeded, failed, "
                           "cancelled or blocked");
    f.sweep = sweep;
    f.before = cursor;
    f.limit = (int)limit;
    json_t *o;
    int rc = views_experiments(r->app->store, &f, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return reply_json(r, 200, o);
}

enum MHD_Result h_show_experiment(struct req *r, int64_t id) { return show(r, 200, id); }

/* ?chain=true: the experiments that wait on it, however far down, too. */
enum MHD_Result h_cancel(struct req *r, int64_t id)
{
    const char *chain = query_str(r, "chain");
    if (chain && strcmp(chain, "true") && strcmp(chain, "false"))
        return reply_error(r, 400, "bad_query", "chain", "chain must be true or false");
    int n = 0;
    int rc = chain && !strcmp(chain, "true") ? store_cancel_chain(r->app->store, id, &n)
                                             : store_cancel(r->app->store, id);
    if (rc == ST_CONFLICT)
        return reply_error(r, 409, "finished", NULL, "experiment %lld has already finished",
                           (long long)id);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    longpoll_wake(r->app); /* a queued gang may have held workers */
    return show(r, 202, id);
}

enum MHD_Result h_metrics(struct req *r, int64_t id)
{
    enum MHD_Result ret;
    long from, to, every;
    if (query_long(r, "from", 0, 0, 1L << 62, &from, &ret) != 0 ||
        query_long(r, "to", 1L << 62, 0, 1L << 62, &to, &ret) != 0 ||
        query_long(r, "every", 1, 1, 1L << 30, &every, &ret) != 0)
        return ret;
    json_t *o;
    int rc = store_metrics(r->app->store, id, query_str(r, "name"), from, to, every, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return reply_json(r, 200, o);
}

enum MHD_Result h_layers(struct req *r, int64_t id)
{
    enum MHD_Result ret;
    long step;
    const char *name;
    if (query_long(r, "step", -1, 0, 1L << 62, &step, &ret) != 0 ||
        !(name = query_text(r, "name", "layer/out_var", &ret)))
        return ret;
    json_t *o;
    int rc = store_layers(r->app->store, id, name, step, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment or layer series");
    return reply_json(r, 200, o);
}

enum MHD_Result h_layer_history(struct req *r, int64_t id)
{
    enum MHD_Result ret;
    const char *name = query_text(r, "name", "layer/out_var", &ret);
    if (!name)
        return ret;
    json_t *o;
    int rc = store_layer_history(r->app->store, id, name, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return reply_json(r, 200, o);
}

enum MHD_Result h_logs(struct req *r, int64_t id)
{
    enum MHD_Result ret;
    long after, limit;
    if (query_long(r, "after", 0, 0, 1L << 62, &after, &ret) != 0 ||
        query_long(r, "limit", 1000, 1, 10000, &limit, &ret) != 0)
        return ret;
    json_t *o;
    int rc = store_logs(r->app->store, id, after, (int)limit, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "experiment");
    return reply_json(r, 200, o);
}

/* A worker is lost once it has not called for longer than a lease: its
 * runs have lapsed by then. */
enum MHD_Result h_workers(struct req *r, int64_t unused)
{
    (void)unused;
    json_t *o;
    int rc = views_workers(r->app->store, r->app->lease_s, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "worker");
    return reply_json(r, 200, o);
}

enum MHD_Result h_remove_worker(struct req *r, int64_t id)
{
    char state[16];
    int runs = 0;
    int rc = store_remove_worker(r->app->store, id, r->app->lease_s, state, sizeof state, &runs);
    if (rc == ST_CONFLICT && runs)
        return reply_error(r, 409, "worker_not_gone", NULL,
                           "worker %lld is %s but its run has not lapsed yet: remove it after "
                           "its lease (%g s) is over",
                           (long long)id, state, r->app->lease_s);
    if (rc == ST_CONFLICT)
        return reply_error(r, 409, "worker_not_gone", NULL,
                           "worker %lld is %s: only an offline worker, or a lost one (silent for "
                           "over %g s), can be removed",
                           (long long)id, state, r->app->lease_s);
    if (rc != ST_OK)
        return reply_store(r, rc, "worker");
    return reply_json(r, 200, json_pack("{s:I,s:b}", "id", (json_int_t)id, "removed", 1));
}
