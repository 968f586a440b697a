/* The worker list and the /metrics counts: see workers.h. */
#include "views/workers.h"

#include <stdlib.h>

static json_t *nullable_str(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *workers_view(const struct worker_row *w, int n)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        json_t *exps = json_array();
        for (int k = 0; exps && k < w[i].n_experiments; k++)
            if (json_array_append_new(exps, json_integer((json_int_t)w[i].experiments[k]))) {
                json_decref(exps);
                exps = NULL;
            }
        json_t *one = exps ? json_pack("{s:I,s:o,s:o,s:o,s:i,s:f,s:f,s:s,s:b,s:o}", "id",
                                       (json_int_t)w[i].id, "name", nullable_str(w[i].name),
                                       "host", nullable_str(w[i].host), "device",
                                       nullable_str(w[i].device), "capacity", w[i].capacity,
                                       "registered", w[i].registered, "heartbeat_age_s",
                                       w[i].heartbeat_age_s, "state", w[i].state, "waiting",
                                       w[i].waiting, "experiments", exps)
                           : NULL;
        if (!one || json_array_append_new(arr, one)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

int views_workers(struct store *st, double lost_after, json_t **out)
{
    struct worker_row *rows;
    int n, ret = store_workers(st, lost_after, &rows, &n);
    if (ret != ST_OK)
        return ret;
    json_t *arr = workers_view(rows, n);
    worker_rows_free(rows, n);
    *out = arr ? json_pack("{s:o}", "workers", arr) : NULL;
    return *out ? ST_OK : ST_ERROR;
}

static json_t *num_or_null(int has, double v)
{
    return has ? json_real(v) : json_null();
}

int views_counts(struct store *st, double lost_after, json_t **out)
{
    struct store_counts k;
    int ret = store_stats(st, lost_after, &k);
    if (ret != ST_OK)
        return ret;
    json_t *states = json_object(), *running = json_array();
    json_t *workers = workers_view(k.workers, k.n_workers);
    int bad = !states || !running || !workers;
    for (int i = 0; !bad && i < k.n_states; i++)
        bad = json_object_set_new(states, k.states[i].state, json_integer((json_int_t)k.states[i].n));
    for (int i = 0; !bad && i < k.n_running; i++) {
        const struct running_row *r = &k.running[i];
        bad = json_array_append_new(
            running, json_pack("{s:I,s:o,s:o,s:o,s:o}", "id", (json_int_t)r->id, "model",
                               nullable_str(r->model), "norm", nullable_str(r->norm), "loss",
                               num_or_null(r->has_loss, r->loss), "tokens_per_s",
                               num_or_null(r->has_tokens_per_s, r->tokens_per_s)));
    }
    *out = bad ? NULL
               : json_pack("{s:O,s:O,s:O,s:I,s:I,s:I,s:I}", "states", states, "workers", workers,
                           "running", running, "lease_expiries", (json_int_t)k.lease_expiries,
                           "commits", (json_int_t)k.commits, "jobs", (json_int_t)k.jobs,
                           "fsyncs", (json_int_t)k.fsyncs);
    json_decref(states);
    json_decref(running);
    json_decref(workers);
    store_counts_free(&k);
    return *out ? ST_OK : ST_ERROR;
}
