/* The worker protocol: register, lease (long-poll), heartbeat, report,
 * finish, and a gang's rendezvous. A run that lost its lease gets 409 and
 * changes nothing. */
#include "api/handlers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
#include "common/device_name.h"

/* How long the strings a worker sends may be: a name is shown in every
 * listing, a reason and a log line are stored and shown by the CLI and the
 * dashboard (cod-worker cuts its log lines to fit). */
enum { NAME_MAX_BYTES = 255, REASON_MAX_BYTES = 4096, LOG_LINE_MAX_BYTES = 16384 };

static enum MHD_Result lost(struct req *r, int64_t run)
{
    return reply_error(r, 409, "lease_lost", NULL,
                       "run %lld no longer holds its lease; the report was not recorded",
                       (long long)run);
}

static enum MHD_Result no_rank(struct req *r, int64_t run, int rank)
{
    return reply_error(r, 422, "invalid", "rank", "run %lld has no rank %d", (long long)run, rank);
}

/* The optional "rank" of a body (0 when absent): 0, or -1 with the answer sent. */
static int rank_of(struct req *r, json_t *b, int *rank, enum MHD_Result *ret)
{
    json_t *v = json_object_get(b, "rank");
    *rank = 0;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= GANG_MAX) {
        *ret = reply_error(r, 422, "invalid", "rank", "rank must be an integer in [0, %d)",
                           (int)GANG_MAX);
        return -1;
    }
    *rank = (int)json_integer_value(v);
    return 0;
}

/* Why a worker's name or host may not be kept, or NULL: every listing
 * shows it and a shell may read it, so it is bounded, holds no control
 * character (C0, DEL, C1) and does not start as a flag does. */
static const char *bad_label(const char *s)
{
    if (strlen(s) > NAME_MAX_BYTES)
        return "must be at most 255 bytes";
    if (s[0] == '-')
        return "must not start with '-'";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return "must hold no control characters";
    return NULL;
}

enum MHD_Result h_register(struct req *r, int64_t unused)
{
    (void)unused;
    enum MHD_Result ret;
    json_t *b = body_object(r, 0, &ret);
    if (!b)
        return ret;
    static const char *const allowed[] = {"name", "device", "capacity", "host", NULL};
    const char *bad = unknown_key(b, allowed);
    json_t *name = json_object_get(b, "name"), *dev = json_object_get(b, "device"),
           *cap = json_object_get(b, "capacity"), *host = json_object_get(b, "host");
    /* a gang is packed by host: the name's part before '/' unless told */
    char host_name[256] = "";
    const char *n = json_string_value(name), *h = json_string_value(host);
    if (h)
        snprintf(host_name, sizeof host_name, "%s", h);
    else if (n) {
        /* a long one is cut, at a character's start: the listing must stay UTF-8 */
        size_t len = strcspn(n, "/");
        if (len >= sizeof host_name)
            for (len = sizeof host_name - 1; len && ((unsigned char)n[len] & 0xc0) == 0x80;)
                len--;
        snprintf(host_name, sizeof host_name, "%.*s", (int)len, n);
    }
    const char *bad_name = n ? bad_label(n) : NULL, *bad_host = h ? bad_label(h) : NULL;
    /* The registry keeps the kind: a cuda:N worker is a cuda worker. */
    const char *d = json_string_value(dev), *device = NULL;
    struct device_name dn;
    if (d && device_parse(d, &dn) == 0 && dn.kind != DEVICE_ANY)
        device = device_kind_name(dn.kind);
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    else if (name && !json_is_string(name))
        ret = reply_error(r, 422, "invalid", "name", "name must be a string");
    else if (bad_name)
        ret = reply_error(r, 422, "invalid", "name", "name %s", bad_name);
    else if (host && (!h || !*h || strlen(h) >= sizeof host_name))
        ret = reply_error(r, 422, "invalid", "host", "host must be a non-empty string of at most %d bytes",
                          (int)sizeof host_name - 1);
    else if (bad_host)
        ret = reply_error(r, 422, "invalid", "host", "host %s", bad_host);
    else if (!device)
        ret = reply_error(r, 422, "invalid", "device", "device must be \"cpu\" or \"cuda\"");
    else if (cap && (!json_is_integer(cap) || json_integer_value(cap) < 1 ||
                     json_integer_value(cap) > 65536))
        ret = reply_error(r, 422, "invalid", "capacity", "capacity must be an integer in [1, 65536]");
    else {
        int64_t id;
        char secret[STORE_SECRET_SIZE];
        int rc = store_register_worker(r->app->store, name ? json_string_value(name) : "", device,
                                       cap ? (int)json_integer_value(cap) : 1, host_name, &id,
                                       secret);
        ret = rc != ST_OK ? reply_store(r, rc, "worker")
                          : reply_json(r, 201, json_pack("{s:I,s:s,s:f,s:f}", "id", (json_int_t)id,
                                                         "secret", secret, "lease_seconds",
                                                         r->app->lease_s, "heartbeat_seconds",
                                                         r->app->lease_s / 3));
    }
    json_decref(b);
    return ret;
}

/* The lease answer: its fields, then the stored spec spliced in as it is. */
static enum MHD_Result reply_lease(struct req *r, struct lease *l)
{
    json_t *fields = json_pack("{s:I,s:I,s:i,s:f,s:i,s:i,s:s}", "run", (json_int_t)l->run,
                               "experiment", (json_int_t)l->experiment, "attempt", l->attempt,
                               "lease_seconds", l->lease_s, "rank", l->rank, "world_size",
                               l->world_size, "secret", l->secret);
    char *head = fields ? json_dumps(fields, JSON_COMPACT) : NULL;
    json_decref(fields);
    static const char key[] = ",\"spec\":";
    size_t hl = head ? strlen(head) : 0, sl = strlen(l->spec);
    char *text = hl >= 2 ? malloc(hl - 1 + sizeof key - 1 + sl + 2) : NULL;
    if (!text) {
        free(head);
        lease_free(l);
        return reply_error(r, 500, "internal", NULL, "out of memory");
    }
    size_t n = hl - 1; /* without the closing brace */
    memcpy(text, head, n);
    memcpy(text + n, key, sizeof key - 1);
    n += sizeof key - 1;
    memcpy(text + n, l->spec, sl);
    n += sl;
    text[n++] = '}';
    text[n++] = '\n';
    free(head);
    lease_free(l);
    enum MHD_Result ret = reply_text(r, 200, "application/json", text, n);
    free(text);
    return ret;
}

/* The store's answer to a lease (on its answering thread): the handler runs again. */
static void lease_taken(void *ctx, int rc)
{
    struct req *r = ctx;
    struct app *app = r->app;
    r->lease_rc = rc;
    r->lease_ready = 1;
    MHD_resume_connection(r->conn);
    pthread_mutex_lock(&app->lock);
    if (--app->store_pending == 0 && app->stopping)
        pthread_cond_broadcast(&app->idle); /* api_stop waits for it */
    pthread_mutex_unlock(&app->lock);
}

/* A lease is claimed on the store's thread while the connection waits
 * suspended (store_lease_start): the HTTP thread serves its other
 * connections meanwhile, and no write thread stands between them. */
enum MHD_Result h_lease(struct req *r, int64_t worker)
{
    enum MHD_Result ret;
    /* A parked poll whose worker has gone must not claim a job for nobody:
     * the job would wait for its lease to lapse, an attempt spent. Closing
     * it hands on a wake it was given (server.c). */
    if (r->poll_deadline != 0 && !r->lease_ready && client_gone(r))
        return MHD_NO;
    if (r->poll_deadline == 0) {
        /* first pass: the worker's own, and how long it is willing to wait */
        if (auth_worker_secret(r, worker, &ret) != 0)
            return ret;
        json_t *b = body_object(r, 1, &ret);
        if (!b)
            return ret;
        static const char *const allowed[] = {"wait", NULL};
        const char *bad = unknown_key(b, allowed);
        json_t *w = json_object_get(b, "wait");
        double wait = json_is_number(w) ? json_number_value(w) : 0;
        int bad_wait = w && (!json_is_number(w) || wait < 0);
        if (bad)
            ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
        else if (bad_wait)
            ret = reply_error(r, 422, "invalid", "wait", "wait must be a number of seconds >= 0");
        json_decref(b);
        if (bad || bad_wait)
            return ret;
        if (wait > r->app->long_poll_max_s)
            wait = r->app->long_poll_max_s;
        r->poll_deadline = store_now() + wait;
    }
    struct app *app = r->app;
    if (!r->lease_ready) {
        struct lease_policy p = {app->lease_s, r->poll_deadline, app->rendezvous_s};
        longpoll_pass_begins(r);
        pthread_mutex_lock(&app->lock);
        int stopping = app->stopping;
        app->store_pending += !stopping;
        pthread_mutex_unlock(&app->lock);
        if (stopping) {
            /* the server is stopping, and must find no connection suspended */
            r->lease_rc = store_lease(app->store, worker, &p, &r->lease, &r->lease_formed,
                                      &r->poll_takes);
        } else {
            /* suspended before the store can answer, so its resume never comes first */
            MHD_suspend_connection(r->conn);
            if (store_lease_start(app->store, worker, &p, &r->lease, &r->lease_formed,
                                  &r->poll_takes, lease_taken, r) != ST_OK)
                lease_taken(r, ST_ERROR);
            return MHD_YES;
        }
    }
    r->lease_ready = 0;
    struct lease lease = r->lease;
    int formed = r->lease_formed, rc = r->lease_rc, for_work = r->poll_for_work;
    if (rc != ST_OK) /* it did not look: its end passes the wake on (server.c) */
        return reply_store(r, rc, "worker");
    r->poll_for_work = 0;
    if (formed) /* the gang's other ranks are parked: tell them now */
        longpoll_wake_gang(r->app);
    if (lease.spec) {
        if (for_work)
            longpoll_pass_on(r->app, r->poll_takes);
        return reply_lease(r, &lease);
    }
    if (!r->app->stopping && store_now() < r->poll_deadline) {
        r->poll_worker = worker;
        return longpoll_park(r);
    }
    return reply_empty(r, 204);
}

enum MHD_Result h_worker_offline(struct req *r, int64_t worker)
{
    enum MHD_Result ret;
    json_t *b = body_object(r, 1, &ret);
    if (!b)
        return ret;
    /* bad points into b: it goes only after the answer that names it */
    const char *bad = unknown_key(b, (const char *const[]){NULL});
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    json_decref(b);
    if (bad || auth_worker_secret(r, worker, &ret) != 0)
        return ret;
    int rc = store_worker_offline(r->app->store, worker);
    if (rc != ST_OK)
        return reply_store(r, rc, "worker");
    longpoll_wake(r->app); /* one cuda worker fewer: a held gang may be passed over */
    return reply_json(r, 200, json_pack("{s:I,s:s}", "id", (json_int_t)worker, "state", "offline"));
}

enum MHD_Result h_heartbeat(struct req *r, int64_t run)
{
    enum MHD_Result ret;
    json_t *b = body_object(r, 1, &ret);
    if (!b)
        return ret;
    static const char *const allowed[] = {"step", "rank", NULL};
    const char *bad = unknown_key(b, allowed);
    json_t *step = json_object_get(b, "step");
    int rank = 0;
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    else if (step && (!json_is_integer(step) || json_integer_value(step) < 0))
        ret = reply_error(r, 422, "invalid", "step", "step must be an integer >= 0");
    else if (rank_of(r, b, &rank, &ret) == 0 && auth_lease_secret(r, run, rank, &ret) == 0) {
        int cancel;
        int rc = store_heartbeat(r->app->store, run, rank, step ? (long)json_integer_value(step) : 0,
                                 r->app->lease_s, &cancel);
        ret = rc == ST_CONFLICT  ? lost(r, run)
              : rc == ST_INVALID ? no_rank(r, run, rank)
              : rc != ST_OK      ? reply_store(r, rc, "run")
                                : reply_json(r, 200, json_pack("{s:b,s:f}", "cancel", cancel,
                                                               "lease_seconds", r->app->lease_s));
    }
    json_decref(b);
    return ret;
}

/* Checks one batch; fills pts/lines pointing into the JSON. Names the bad field. */
static int parse_batch(json_t *b, struct metric_point **pts, int *n, struct log_line **lines,
                       int *nl, char *field, size_t flen, char *msg, size_t mlen)
{
    json_t *p = json_object_get(b, "points"), *l = json_object_get(b, "logs");
    *pts = NULL;
    *lines = NULL;
    *n = *nl = 0;
    if (p && !json_is_array(p)) {
        snprintf(field, flen, "points");
        snprintf(msg, mlen, "points must be a list");
        return -1;
    }
    if (l && !json_is_array(l)) {
        snprintf(field, flen, "logs");
        snprintf(msg, mlen, "logs must be a list");
        return -1;
    }
    size_t np = json_array_size(p), nlog = json_array_size(l);
    *pts = calloc(np ? np : 1, sizeof **pts);
    *lines = calloc(nlog ? nlog : 1, sizeof **lines);
    if (!*pts || !*lines) {
        snprintf(msg, mlen, "out of memory");
        return -1;
    }
    static const char *const pkeys[] = {"step", "name", "value", "layer", NULL};
    for (size_t i = 0; i < np; i++) {
        json_t *o = json_array_get(p, i);
        const char *bad = json_is_object(o) ? unknown_key(o, pkeys) : NULL;
        json_t *step = json_object_get(o, "step"), *name = json_object_get(o, "name"),
               *value = json_object_get(o, "value"), *layer = json_object_get(o, "layer");
        const char *what = NULL, *key = NULL;
        if (!json_is_object(o))
            what = "must be an object", key = "";
        else if (bad)
            what = "is an unknown field", key = bad;
        else if (!json_is_integer(step) || json_integer_value(step) < 0)
            what = "must be an integer >= 0", key = "step";
        else if (!json_is_string(name) || !json_string_length(name) ||
                 json_string_length(name) > 128)
            what = "must be a metric name (1 to 128 characters)", key = "name";
        else if (!value || !(json_is_number(value) || json_is_null(value)))
            what = "must be a number, or null for a non-finite value", key = "value";
        else if (layer && (!json_is_integer(layer) || json_integer_value(layer) < 0 ||
                           json_integer_value(layer) > 100000))
            what = "must be an integer >= 0", key = "layer";
        if (what) {
            snprintf(field, flen, "points[%zu]%s%s", i, *key ? "." : "", key);
            snprintf(msg, mlen, "%s %s", field, what);
            return -1;
        }
        (*pts)[i] = (struct metric_point){
            .name = json_string_value(name), .step = (long)json_integer_value(step),
            .layer = layer ? (int)json_integer_value(layer) : -1,
            .value = json_is_null(value) ? 0 : json_number_value(value),
            .is_null = json_is_null(value) || !isfinite(json_number_value(value)),
        };
    }
    static const char *const lkeys[] = {"seq", "line", NULL};
    for (size_t i = 0; i < nlog; i++) {
        json_t *o = json_array_get(l, i);
        json_t *seq = json_object_get(o, "seq"), *line = json_object_get(o, "line");
        if (!json_is_object(o) || unknown_key(o, lkeys) || !json_is_integer(seq) ||
            !json_is_string(line)) {
            snprintf(field, flen, "logs[%zu]", i);
            snprintf(msg, mlen, "%s must be {\"seq\": integer, \"line\": string}", field);
            return -1;
        }
        if (json_string_length(line) > LOG_LINE_MAX_BYTES) {
            snprintf(field, flen, "logs[%zu].line", i);
            snprintf(msg, mlen, "%s is %zu bytes, more than a line's %d", field,
                     json_string_length(line), LOG_LINE_MAX_BYTES);
            return -1;
        }
        (*lines)[i] = (struct log_line){(long)json_integer_value(seq), json_string_value(line)};
    }
    *n = (int)np;
    *nl = (int)nlog;
    return 0;
}

static enum MHD_Result report(struct req *r, int64_t run, const char *const *allowed)
{
    enum MHD_Result ret;
    json_t *b = body_object(r, 0, &ret);
    if (!b)
        return ret;
    const char *bad = unknown_key(b, allowed);
    struct metric_point *pts = NULL;
    struct log_line *lines = NULL;
    int n, nl;
    char field[64] = "", msg[256];
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    else if (auth_lease_secret(r, run, 0, &ret) != 0)
        ; /* rank 0 sends a run's points and lines */
    else if (parse_batch(b, &pts, &n, &lines, &nl, field, sizeof field, msg, sizeof msg) != 0)
        ret = reply_error(r, 422, "invalid", field[0] ? field : NULL, "%s", msg);
    else {
        int rc = store_report(r->app->store, run, pts, n, lines, nl);
        ret = rc == ST_CONFLICT ? lost(r, run)
              : rc != ST_OK     ? reply_store(r, rc, "run")
                                : reply_json(r, 200, json_pack("{s:i,s:i}", "points", n, "logs", nl));
    }
    free(pts);
    free(lines);
    json_decref(b);
    return ret;
}

enum MHD_Result h_report(struct req *r, int64_t run)
{
    static const char *const allowed[] = {"points", "logs", NULL};
    return report(r, run, allowed);
}

enum MHD_Result h_run_logs(struct req *r, int64_t run)
{
    static const char *const allowed[] = {"logs", NULL};
    return report(r, run, allowed);
}

/* A run that says it succeeded while the server lacks its points. */
static enum MHD_Result incomplete(struct req *r, int64_t run, long points,
                                  const struct points_held *h)
{
    if (!h->final_loss)
        return reply_error(r, 409, "points_missing", NULL,
                           "run %lld cannot succeed: no train/loss point of its final step %ld is "
                           "stored; send the run's points, then finish",
                           (long long)run, h->final_step);
    return reply_error(r, 409, "points_missing", NULL,
                       "run %lld cannot succeed: %ld of the %ld points its files hold are stored; "
                       "send the missing points, then finish",
                       (long long)run, h->points, points);
}

enum MHD_Result h_finish(struct req *r, int64_t run)
{
    enum MHD_Result ret;
    json_t *b = body_object(r, 0, &ret);
    if (!b)
        return ret;
    static const char *const allowed[] = {"outcome", "reason", "points", "rank", "retry", NULL};
    const char *bad = unknown_key(b, allowed);
    const char *outcome = json_string_value(json_object_get(b, "outcome"));
    json_t *reason = json_object_get(b, "reason"), *points = json_object_get(b, "points"),
           *retry = json_object_get(b, "retry");
    int rank = 0;
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    else if (!outcome || (strcmp(outcome, "succeeded") && strcmp(outcome, "failed") &&
                          strcmp(outcome, "cancelled") && strcmp(outcome, "released")))
        ret = reply_error(r, 422, "invalid", "outcome",
                          "outcome must be succeeded, failed, cancelled or released");
    else if (reason && !json_is_string(reason))
        ret = reply_error(r, 422, "invalid", "reason", "reason must be a string");
    else if (reason && json_string_length(reason) > REASON_MAX_BYTES)
        ret = reply_error(r, 422, "invalid", "reason", "reason is %zu bytes, more than %d",
                          json_string_length(reason), REASON_MAX_BYTES);
    else if (points && (!json_is_integer(points) || json_integer_value(points) < 0))
        ret = reply_error(r, 422, "invalid", "points", "points must be an integer >= 0");
    else if (retry && !json_is_boolean(retry))
        ret = reply_error(r, 422, "invalid", "retry", "retry must be true or false");
    else if (rank_of(r, b, &rank, &ret) == 0 && auth_lease_secret(r, run, rank, &ret) == 0) {
        long want = points ? (long)json_integer_value(points) : 0;
        struct points_held held;
        struct finish f = {run, rank, outcome, json_string_value(reason), want,
                           retry && json_is_true(retry)};
        int64_t worker;
        int rc = store_finish(r->app->store, &f, &held, &worker);
        if (rc == ST_OK && (!strcmp(outcome, "failed") || !strcmp(outcome, "released")))
            longpoll_wake(r->app); /* queued again: a worker may take it */
        else if (rc == ST_OK && worker)
            longpoll_wake_worker(r->app, worker); /* its capacity is free again */
        ret = rc == ST_CONFLICT     ? lost(r, run)
              : rc == ST_INVALID    ? no_rank(r, run, rank)
              : rc == ST_INCOMPLETE ? incomplete(r, run, want, &held)
              : rc != ST_OK         ? reply_store(r, rc, "run")
                                    : reply_json(r, 200, json_pack("{s:I,s:s}", "run", (json_int_t)run,
                                                                   "state", outcome));
    }
    json_decref(b);
    return ret;
}

/* Rank 0 posts its communicator id (base64 of at most 1 KiB); the ranks
 * read it, long-polling until it is there (api/longpoll.c). */
enum MHD_Result h_rendezvous_post(struct req *r, int64_t run)
{
    enum MHD_Result ret;
    json_t *b = body_object(r, 0, &ret);
    if (!b)
        return ret;
    static const char *const allowed[] = {"rank", "id", NULL};
    const char *bad = unknown_key(b, allowed);
    const char *id = json_string_value(json_object_get(b, "id"));
    int rank = 0;
    size_t bad_char = id ? strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789+/=")
                         : 0;
    if (bad)
        ret = reply_error(r, 422, "invalid", bad, "unknown field \"%s\"", bad);
    else if (!id || !*id || strlen(id) > 1400 || id[bad_char])
        ret = reply_error(r, 422, "invalid", "id",
                          "id must be the communicator's id in base64 (at most 1 KiB of it)");
    else if (rank_of(r, b, &rank, &ret) == 0 && auth_lease_secret(r, run, rank, &ret) == 0) {
        if (rank != 0) {
            ret = reply_error(r, 422, "invalid", "rank", "only rank 0 posts the rendezvous id");
        } else {
            int rc = store_rendezvous_set(r->app->store, run, id);
            if (rc == ST_OK)
                longpoll_wake(r->app);
            ret = rc == ST_CONFLICT  ? lost(r, run)
                  : rc == ST_INVALID ? reply_error(r, 409, "rendezvous_taken", "id",
                                                   "run %lld has its rendezvous id already, another one",
                                                   (long long)run)
                  : rc != ST_OK      ? reply_store(r, rc, "run")
                                    : reply_json(r, 200, json_pack("{s:I}", "run", (json_int_t)run));
        }
    }
    json_decref(b);
    return ret;
}

enum MHD_Result h_rendezvous_get(struct req *r, int64_t run)
{
    if (r->poll_deadline == 0) {
        enum MHD_Result ret;
        long rank;
        const char *w = query_str(r, "wait");
        char *end = NULL;
        double wait = w ? strtod(w, &end) : 0;
        if (w && (!*w || *end || !(wait >= 0)))
            return reply_error(r, 400, "bad_query", "wait", "wait must be a number of seconds >= 0");
        if (query_long(r, "rank", 0, 0, GANG_MAX - 1, &rank, &ret) != 0 ||
            auth_lease_secret(r, run, (int)rank, &ret) != 0)
            return ret;
        if (wait > r->app->long_poll_max_s)
            wait = r->app->long_poll_max_s;
        r->poll_deadline = store_now() + wait;
    }
    char id[1500];
    longpoll_pass_begins(r);
    int rc = store_rendezvous_get(r->app->store, run, id, sizeof id);
    if (rc != ST_OK)
        return reply_store(r, rc, "run");
    if (*id)
        return reply_json(r, 200, json_pack("{s:I,s:s}", "run", (json_int_t)run, "id", id));
    if (!r->app->stopping && store_now() < r->poll_deadline)
        return longpoll_park(r);
    return reply_empty(r, 204);
}
