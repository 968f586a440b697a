/* A sweep's fine-tuning table: see tasks.h. */
#include "views/tasks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "views/replicates.h"

static const char *const MEASURES[] = {"acc", "acc_norm"};

/* The stage's task names, sorted, over every cell that has scores. */
static json_t *task_names(const json_t *cells, json_int_t stage)
{
    json_t *set = json_object(), *names = json_array(), *cell;
    size_t i;
    const char *k;
    json_t *v;
    json_array_foreach(cells, i, cell) {
        if (json_integer_value(json_object_get(cell, "stage")) != stage)
            continue;
        json_object_foreach(json_object_get(cell, "tasks"), k, v) json_object_set_new(set, k, json_true());
    }
    json_object_foreach(set, k, v) json_array_append_new(names, json_string(k));
    json_decref(set);
    /* json objects keep no order: the table's columns are alphabetical */
    size_t n = json_array_size(names);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(json_string_value(json_array_get(names, b - 1)),
                                           json_string_value(json_array_get(names, b))) > 0; b--) {
            json_t *x = json_incref(json_array_get(names, b - 1));
            json_array_set(names, b - 1, json_array_get(names, b));
            json_array_set_new(names, b, x);
        }
    return names;
}

static json_t *params_but_seed(const json_t *cell)
{
    json_t *p = json_deep_copy(json_object_get(cell, "params"));
    if (p)
        json_object_del(p, REPLICATE_KEY);
    return p ? p : json_object();
}

static double score(const json_t *cell, const char *task, const char *measure)
{
    json_t *v = json_object_get(json_object_get(json_object_get(cell, "tasks"), task), measure);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One row: the cells of one variant, summarised per task and on average. */
static json_t *row_of(const json_t *members, const json_t *names, json_t *params)
{
    size_t n = json_array_size(members), i, t;
    json_t *row = json_pack("{s:o,s:[],s:i}", "params", params, "experiments", "n", 0);
    json_t *tasks = json_object(), *cell, *name;
    double *x = malloc((n + 1) * sizeof *x), *avg = malloc((n + 1) * sizeof *avg);
    int counted = 0, n_avg = 0;
    if (!row || !tasks || !x || !avg)
        goto fail;
    json_array_foreach(members, i, cell) {
        json_array_append(json_object_get(row, "experiments"), json_object_get(cell, "experiment"));
        const char *state = json_string_value(json_object_get(cell, "state"));
        int done = state && !strcmp(state, "succeeded");
        counted += done;
        double sum = 0;
        int all = done && json_array_size(names) > 0;
        json_array_foreach(names, t, name) {
            double a = score(cell, json_string_value(name), "acc");
            all &= isfinite(a);
            sum += a;
        }
        if (all)
            avg[n_avg++] = sum / (double)json_array_size(names);
    }
    json_array_foreach(names, t, name) {
        json_t *m = json_object();
        for (size_t k = 0; m && k < 2; k++) {
            int nx = 0;
            json_array_foreach(members, i, cell) {
                const char *state = json_string_value(json_object_get(cell, "state"));
                double v = score(cell, json_string_value(name), MEASURES[k]);
                if (state && !strcmp(state, "succeeded") && isfinite(v))
                    x[nx++] = v;
            }
            json_object_set_new(m, MEASURES[k], replicates_summary(x, nx));
        }
        json_object_set_new(tasks, json_string_value(name), m);
    }
    /* each set takes its value, even when it fails */
    int bad = json_object_set_new(row, "n", json_integer(counted)) |
              json_object_set_new(row, "tasks", tasks) |
              json_object_set_new(row, "average", replicates_summary(avg, n_avg));
    free(x);
    free(avg);
    if (bad) {
        json_decref(row);
        return NULL;
    }
    return row;
fail:
    json_decref(row);
    json_decref(tasks);
    free(x);
    free(avg);
    return NULL;
}

/* The table of one stage: its cells grouped by variant, in the order they first come. */
static json_t *table_of(const json_t *cells, json_int_t stage)
{
    json_t *names = task_names(cells, stage), *groups = json_array(), *members = json_array();
    json_t *rows = json_array(), *out = NULL, *cell, *g;
    size_t i, gi;
    if (!names || !groups || !members || !rows)
        goto done;
    json_array_foreach(cells, i, cell) {
        if (json_integer_value(json_object_get(cell, "stage")) != stage)
            continue;
        json_t *p = params_but_seed(cell);
        size_t found = json_array_size(groups);
        json_array_foreach(groups, gi, g) if (json_equal(g, p)) {
            found = gi;
            break;
        }
        if (found == json_array_size(groups)) {
            json_array_append(groups, p);
            json_array_append_new(members, json_array());
        }
        json_array_append(json_array_get(members, found), cell);
        json_decref(p);
    }
    json_array_foreach(groups, gi, g) {
        json_t *row = row_of(json_array_get(members, gi), names, json_incref(g));
        if (!row || json_array_append_new(rows, row))
            goto done;
    }
    out = json_pack("{s:I,s:s,s:O,s:O}", "stage", stage, "measure", "acc", "tasks", names, "rows",
                    rows);
done:
    json_decref(names);
    json_decref(groups);
    json_decref(members);
    json_decref(rows);
    return out;
}

int tasks_table(const json_t *cells, json_t **out)
{
    *out = json_array();
    json_int_t top = 0;
    size_t i;
    json_t *cell;
    json_array_foreach(cells, i, cell) {
        json_int_t s = json_integer_value(json_object_get(cell, "stage"));
        top = s > top ? s : top;
    }
    for (json_int_t s = 1; *out && s <= top; s++) {
        int scored = 0;
        json_array_foreach(cells, i, cell) scored |=
            json_integer_value(json_object_get(cell, "stage")) == s &&
            json_object_size(json_object_get(cell, "tasks")) > 0;
        json_t *t = scored ? table_of(cells, s) : NULL;
        if (scored && (!t || json_array_append_new(*out, t))) {
            json_decref(*out);
            *out = NULL;
        }
    }
    return *out ? 0 : -1;
}
