/* A sweep's averaged series and its report (report/report.h), both built
 * from the store's sweep views, so the report shows the API's numbers. */
#include "api/handlers.h"

#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "views/experiment.h"
#include "views/sweep.h"
#include "spec/spec.h"

enum MHD_Result h_sweep_series(struct req *r, int64_t id)
{
    enum MHD_Result ret;
    long every;
    const char *name = query_str(r, "name");
    if (query_long(r, "every", 1, 1, 1L << 30, &every, &ret) != 0)
        return ret;
    if (!name || !*name)
        return reply_error(r, 400, "bad_query", "name", "name is required: the metric to average");
    json_t *o;
    int rc = views_sweep_series(r->app->store, id, NULL, name, every, &o);
    if (rc != ST_OK)
        return reply_store(r, rc, "sweep");
    return reply_json(r, 200, o);
}

/* The names of the tasks a spec's analysis.tasks evaluates, into the set
 * `tasks` (their accuracy ΔP series to ask for). */
static void task_names(const json_t *spec, json_t *tasks)
{
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(json_object_get(spec, "analysis"), "tasks"), i, t) {
        const char *file = json_is_string(t) ? json_string_value(t)
                                             : json_string_value(json_object_get(t, "file"));
        char name[80];
        if (file) {
            spec_task_name(file, name, sizeof name);
            json_object_set_new(tasks, name, json_true());
        }
    }
}

/* Each group's model as its first experiment's spec says: its name, its
 * depth (the angular series to ask for), its step count (the thinning of
 * its learning curve) and its tasks. */
static int group_models(struct req *r, const json_t *view, json_t *info, int *max_layers,
                        long *max_steps, json_t *tasks)
{
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(view, "groups"), i, g) {
        json_t *e;
        json_int_t first = json_integer_value(json_array_get(json_object_get(g, "experiments"), 0));
        int rc = views_experiment(r->app->store, first, &e);
        if (rc != ST_OK)
            return rc;
        const json_t *spec = json_object_get(e, "spec");
        json_int_t layers = json_integer_value(json_object_get(json_object_get(spec, "model"), "n_layers"));
        json_int_t steps = json_integer_value(json_object_get(json_object_get(spec, "train"), "steps"));
        *max_layers = layers > *max_layers ? (int)layers : *max_layers;
        *max_steps = steps > *max_steps ? (long)steps : *max_steps;
        task_names(spec, tasks);
        rc = json_array_append_new(info, json_pack("{s:O,s:I}", "model", json_object_get(e, "model"),
                                                   "n_layers", layers));
        json_decref(e);
        if (rc)
            return ST_ERROR;
    }
    return ST_OK;
}

enum MHD_Result h_sweep_report(struct req *r, int64_t id)
{
    json_t *view, *info = json_array(), *series = json_object(), *tasks = json_object(),
           *doc = NULL, *files = NULL;
    int rc = views_sweep(r->app->store, id, &view);
    if (rc != ST_OK) {
        json_decref(info);
        json_decref(series);
        json_decref(tasks);
        return reply_store(r, rc, "sweep");
    }
    int max_layers = 0;
    long max_steps = 0;
    rc = info && series && tasks ? group_models(r, view, info, &max_layers, &max_steps, tasks)
                                 : ST_ERROR;
    for (const char *const *n = report_series; rc == ST_OK && *n; n++) {
        json_t *s;
        rc = views_sweep_series(r->app->store, id, view, *n, report_every(*n, max_steps), &s);
        if (rc == ST_OK)
            json_object_set_new(series, *n, s);
    }
    for (int k = 1; rc == ST_OK && k <= max_layers; k++) {
        char name[32];
        json_t *s;
        snprintf(name, sizeof name, "angular/n%d", k);
        rc = views_sweep_series(r->app->store, id, view, name, 1, &s);
        if (rc == ST_OK)
            json_object_set_new(series, name, s);
    }
    const char *task;
    json_t *on;
    json_object_foreach(tasks, task, on) {
        char name[160];
        json_t *s;
        snprintf(name, sizeof name, "prune/%s/delta_acc", task);
        if (rc == ST_OK && (rc = views_sweep_series(r->app->store, id, view, name, 1, &s)) == ST_OK)
            json_object_set_new(series, name, s);
    }
    json_decref(tasks);
    char err[256];
    if (rc == ST_OK && !(doc = json_pack("{s:O,s:O,s:O,s:O}", "sweep", view, "name",
                                         json_object_get(view, "name"), "groups", info, "series", series)))
        rc = ST_ERROR;
    json_decref(view);
    json_decref(info);
    json_decref(series);
    if (rc != ST_OK) {
        json_decref(doc);
        return reply_store(r, rc, "sweep");
    }
    rc = report_render(doc, &files, err, sizeof err);
    json_decref(doc);
    if (rc != 0)
        return reply_error(r, 500, "internal", NULL, "%s", err);
    return reply_json(r, 200, json_pack("{s:I,s:o}", "sweep", (json_int_t)id, "files", files));
}
