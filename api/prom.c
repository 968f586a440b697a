/* Prometheus exposition. Labels are escaped as the text format requires. */
#include "api/prom.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double bounds[PROM_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                            0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

void prom_init(struct http_stats *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
}

void prom_destroy(struct http_stats *h) { pthread_mutex_destroy(&h->lock); }

void prom_observe(struct http_stats *h, const char *route, int status, double seconds)
{
    pthread_mutex_lock(&h->lock);
    int i;
    for (i = 0; i < h->n_series; i++)
        if (h->series[i].route == route && h->series[i].status == status)
            break;
    if (i == h->n_series && h->n_series < PROM_MAX_SERIES) {
        h->series[i].route = route;
        h->series[i].status = status;
        h->series[i].n = 0;
        h->n_series++;
    }
    if (i < h->n_series)
        h->series[i].n++;
    int r;
    for (r = 0; r < h->n_hist; r++)
        if (h->hist[r].route == route)
            break;
    if (r == h->n_hist && h->n_hist < PROM_MAX_ROUTES)
        h->hist[h->n_hist++].route = route;
    if (r < h->n_hist) {
        int b = 0;
        while (b < PROM_BUCKETS && seconds > bounds[b])
            b++;
        h->hist[r].bucket[b]++;
        h->hist[r].sum += seconds;
        h->hist[r].count++;
    }
    pthread_mutex_unlock(&h->lock);
}

struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void put(struct buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = 2 * b->cap + (size_t)n;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* A label value with \, " and newline escaped. */
static void put_label(struct buf *b, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            put(b, "\\%c", *v);
        else if (*v == '\n')
            put(b, "\\n");
        else
            put(b, "%c", *v);
    }
}

static void per_running(struct buf *b, json_t *running, const char *metric, const char *key,
                        const char *help)
{
    put(b, "# HELP %s %s\n# TYPE %s gauge\n", metric, help, metric);
    size_t i;
    json_t *r;
    json_array_foreach(running, i, r) {
        json_t *v = json_object_get(r, key);
        if (!json_is_number(v))
            continue;
        put(b, "%s{experiment=\"%lld\",model=\"", metric,
            (long long)json_integer_value(json_object_get(r, "id")));
        put_label(b, json_string_value(json_object_get(r, "model")));
        put(b, "\",norm=\"");
        put_label(b, json_string_value(json_object_get(r, "norm")));
        put(b, "\"} %.17g\n", json_number_value(v));
    }
}

/* One unlabelled series, its value the number stats holds under key. */
static void put_stat(struct buf *b, json_t *stats, const char *key, const char *name,
                     const char *type, const char *help)
{
    put(b, "# HELP %s %s\n# TYPE %s %s\n%s %lld\n", name, help, name, type, name,
        (long long)json_integer_value(json_object_get(stats, key)));
}

char *prom_render(struct http_stats *h, json_t *stats)
{
    struct buf b = {malloc(8192), 0, 8192, 0};
    if (!b.p)
        return NULL;
    static const char *const states[] = {"waiting", "queued",    "running", "succeeded",
                                         "failed",  "cancelled", "blocked"};
    json_t *st = json_object_get(stats, "states");
    put(&b, "# HELP cod_experiments Experiments by state.\n# TYPE cod_experiments gauge\n");
    for (int i = 0; i < 7; i++)
        put(&b, "cod_experiments{state=\"%s\"} %lld\n", states[i],
            (long long)json_integer_value(json_object_get(st, states[i])));
    put_stat(&b, st, "queued", "cod_queue_depth", "gauge", "Experiments waiting for a worker.");
    static const char *const wstates[] = {"idle", "busy", "lost", "offline"};
    enum { N_WSTATES = sizeof wstates / sizeof wstates[0] };
    long long wk[N_WSTATES] = {0};
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(stats, "workers"), i, w) {
        const char *s = json_string_value(json_object_get(w, "state"));
        for (int k = 0; k < N_WSTATES; k++)
            if (s && !strcmp(s, wstates[k]))
                wk[k]++;
    }
    put(&b, "# HELP cod_workers Registered workers by state.\n# TYPE cod_workers gauge\n");
    for (int k = 0; k < N_WSTATES; k++)
        put(&b, "cod_workers{state=\"%s\"} %lld\n", wstates[k], wk[k]);
    put_stat(&b, stats, "lease_expiries", "cod_lease_expiries_total", "counter",
             "Leases that lapsed without a heartbeat.");
    put_stat(&b, stats, "commits", "cod_store_commits_total", "counter",
             "Write transactions committed (with group commit, a batch of requests each).");
    put_stat(&b, stats, "parked", "cod_longpolls_parked", "gauge",
             "Long-polls waiting parked for work (lease) or a rendezvous id.");
    put_stat(&b, stats, "woken", "cod_longpolls_woken_total", "counter",
             "Parked long-polls resumed because work may be there for them (not at their own "
             "time).");
    put_stat(&b, stats, "jobs", "cod_store_jobs_total", "counter",
             "Write jobs the committer ran (a request's write each, a lease poll's pass included).");
    put_stat(&b, stats, "fsyncs", "cod_store_fsyncs_total", "counter", "The database's fsyncs.");
    json_t *running = json_object_get(stats, "running");
    per_running(&b, running, "cod_train_loss", "loss", "Newest train/loss of a running experiment.");
    per_running(&b, running, "cod_train_tokens_per_s", "tokens_per_s",
                "Newest train/tokens_per_s of a running experiment.");

    pthread_mutex_lock(&h->lock);
    put(&b, "# HELP cod_http_requests_total HTTP requests by route and status.\n"
            "# TYPE cod_http_requests_total counter\n");
    for (int k = 0; k < h->n_series; k++) {
        put(&b, "cod_http_requests_total{route=\"");
        put_label(&b, h->series[k].route);
        put(&b, "\",status=\"%d\"} %llu\n", h->series[k].status, h->series[k].n);
    }
    put(&b, "# HELP cod_http_request_duration_seconds Time from a request's headers read to its"
            " answer sent, by route.\n"
            "# TYPE cod_http_request_duration_seconds histogram\n");
    for (int r = 0; r < h->n_hist; r++) {
        unsigned long long cum = 0;
        for (int k = 0; k <= PROM_BUCKETS; k++) {
            cum += h->hist[r].bucket[k];
            put(&b, "cod_http_request_duration_seconds_bucket{route=\"");
            put_label(&b, h->hist[r].route);
            if (k < PROM_BUCKETS)
                put(&b, "\",le=\"%g\"} %llu\n", bounds[k], cum);
            else
                put(&b, "\",le=\"+Inf\"} %llu\n", cum);
        }
        put(&b, "cod_http_request_duration_seconds_sum{route=\"");
        put_label(&b, h->hist[r].route);
        put(&b, "\"} %.9g\ncod_http_request_duration_seconds_count{route=\"", h->hist[r].sum);
        put_label(&b, h->hist[r].route);
        put(&b, "\"} %llu\n", h->hist[r].count);
    }
    pthread_mutex_unlock(&h->lock);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
