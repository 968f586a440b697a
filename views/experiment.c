/* An experiment's view and the experiment list: see experiment.h. */
#include "views/experiment.h"

#include <stdio.h>
#include <stdlib.h>

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *id_or_null(int64_t id)
{
    return id ? json_integer((json_int_t)id) : json_null();
}

/* What both views show of the row, in this order. */
static json_t *row_view(const struct exp_row *e)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "id", json_integer((json_int_t)e->id)) |
              json_object_set_new(o, "name", str_or_null(e->name)) |
              json_object_set_new(o, "model", str_or_null(e->model)) |
              json_object_set_new(o, "norm", str_or_null(e->norm)) |
              json_object_set_new(o, "device", str_or_null(e->device)) |
              json_object_set_new(o, "state", str_or_null(e->state)) |
              json_object_set_new(o, "attempts", json_integer(e->attempts)) |
              json_object_set_new(o, "max_attempts", json_integer(e->max_attempts)) |
              json_object_set_new(o, "priority", json_integer(e->priority)) |
              json_object_set_new(o, "reason", str_or_null(e->reason)) |
              json_object_set_new(o, "sweep", id_or_null(e->sweep)) |
              json_object_set_new(o, "run", id_or_null(e->run)) |
              json_object_set_new(o, "worker", id_or_null(e->worker)) |
              json_object_set_new(o, "step", json_integer((json_int_t)e->step)) |
              json_object_set_new(o, "steps", json_integer((json_int_t)e->steps)) |
              json_object_set_new(o, "created", json_real(e->created)) |
              json_object_set_new(o, "started", e->has_started ? json_real(e->started) : json_null()) |
              json_object_set_new(o, "finished",
                                  e->has_finished ? json_real(e->finished) : json_null()) |
              json_object_set_new(o, "cancel_requested", json_boolean(e->cancel_req)) |
              json_object_set_new(o, "stage", json_integer(e->stage)) |
              json_object_set_new(o, "progress",
                                  json_real(e->steps > 0 ? (double)e->step / (double)e->steps : 0.0));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *links_view(const struct exp_link *l, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_pack("{s:I,s:o,s:o}", "id", (json_int_t)l[i].id, "name",
                                                str_or_null(l[i].name), "state",
                                                str_or_null(l[i].state)))) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

static json_t *latest_view(const struct latest_point *p, int n)
{
    json_t *o = json_object();
    for (int i = 0; o && i < n; i++)
        if (json_object_set_new(o, p[i].name,
                                json_pack("{s:I,s:o}", "step", (json_int_t)p[i].step, "value",
                                          p[i].has_value ? json_real(p[i].value) : json_null()))) {
            json_decref(o);
            o = NULL;
        }
    return o;
}

int views_experiment(struct store *st, int64_t id, json_t **out)
{
    struct exp_row e;
    int ret = store_get_experiment(st, id, &e);
    if (ret != ST_OK)
        return ret;
    json_t *o = row_view(&e), *spec = e.spec ? json_loads(e.spec, 0, NULL) : NULL;
    int bad = !o || json_object_set_new(o, "after", links_view(e.after, e.n_after)) ||
              json_object_set_new(o, "then", links_view(e.then, e.n_then)) ||
              json_object_set_new(o, "spec", spec ? spec : json_null()) ||
              json_object_set_new(o, "latest", latest_view(e.latest, e.n_latest));
    exp_row_free(&e);
    if (bad) {
        json_decref(o);
        return ST_ERROR;
    }
    *out = o;
    return ST_OK;
}

int views_experiments(struct store *st, const struct exp_filter *f, json_t **out)
{
    struct exp_row *rows;
    int n, more;
    int ret = store_list_experiments(st, f, &rows, &n, &more);
    if (ret != ST_OK)
        return ret;
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        json_t *row = row_view(&rows[i]), *after = NULL;
        if (row && rows[i].after_ids)
            after = json_loads(rows[i].after_ids, 0, NULL);
        /* each set and append takes its value, even when it fails */
        int bad = !row || json_object_set_new(row, "after", after ? after : json_array());
        if (bad)
            json_decref(row);
        if (bad || json_array_append_new(arr, row)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    char cur[32];
    snprintf(cur, sizeof cur, "%lld", n ? (long long)rows[n - 1].id : 0LL);
    for (int i = 0; i < n; i++)
        exp_row_free(&rows[i]);
    free(rows);
    *out = arr ? json_pack("{s:o,s:o}", "experiments", arr, "next_cursor",
                           more ? json_string(cur) : json_null())
               : NULL;
    return *out ? ST_OK : ST_ERROR;
}
