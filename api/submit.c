/* Submission checks and sweep expansion. */
#include "api/submit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "views/replicates.h"
#include "spec/footprint.h"
#include "spec/data.h"

static void set_err(struct spec_error *err, const char *field, const char *fmt, const char *arg)
{
    snprintf(err->field, sizeof err->field, "%.127s", field);
    snprintf(err->message, sizeof err->message, fmt, arg);
}

/* The experiment's model column: the preset's name, or for a model given
 * by its shape a name after it (L6-d128: 6 blocks of width 128), so that
 * listings and filters tell such models apart. */
static void model_label(const struct model_shape *m, char *out, size_t n)
{
    if (strcmp(m->preset, "custom"))
        snprintf(out, n, "%s", m->preset);
    else
        snprintf(out, n, "L%d-d%d", m->n_layers, m->dim);
}

/* A model no GPU holds is refused here, not at a worker's allocation. */
static int check_size(const struct job_spec *spec, double max_gib, struct spec_error *err)
{
    struct footprint f;
    spec_footprint(spec, &f);
    if (f.bytes <= max_gib * (1 << 30))
        return 0;
    snprintf(err->field, sizeof err->field, "model");
    snprintf(err->message, sizeof err->message,
             "a model of %.3g parameters needs at least %.4g GiB to train at train.micro_batch %d "
             "x seq_len %d (weights, gradients, Adam's moments and activations): more than this "
             "server's --max-model-gib %g",
             f.params, f.bytes / (1 << 30), spec->train.micro_batch, spec->train.seq_len, max_gib);
    return -1;
}

int submission_from_json(json_t *spec, const struct submit_rules *rules, struct submission *s,
                         struct spec_error *err)
{
    memset(s, 0, sizeof *s);
    int meta_vocab;
    if (spec_from_json(spec, &s->spec, err) != 0)
        return -1;
    if (s->spec.gpus > rules->max_gang) {
        snprintf(err->field, sizeof err->field, "resources.gpus");
        snprintf(err->message, sizeof err->message,
                 "gpus %d is more than this server's largest gang (--max-gang %d)", s->spec.gpus,
                 rules->max_gang);
        return -1;
    }
    if (data_roots_check(&rules->roots, s->spec.train_glob, "data.train", err) != 0 ||
        data_roots_check(&rules->roots, s->spec.val_glob, "data.val", err) != 0 ||
        spec_check_files(&s->spec, &meta_vocab, err) != 0 ||
        (!s->spec.model_from_init && check_size(&s->spec, rules->max_model_gib, err) != 0))
        return -1;
    json_t *full = spec_to_json(&s->spec);
    s->spec_json = full ? json_dumps(full, JSON_COMPACT) : NULL;
    json_decref(full);
    if (!s->spec_json) {
        set_err(err, "", "%s", "out of memory");
        return -1;
    }
    model_label(&s->spec.model, s->model, sizeof s->model);
    /* a start's model and variant: the experiment's it starts from, which the store reads */
    const struct job_spec *j = &s->spec;
    s->row = (struct new_experiment){
        .name = j->name, .model = j->model_from_init ? NULL : s->model,
        .norm = j->norm_from_init ? NULL : j->norm.name, .device = j->device,
        .spec_json = s->spec_json, .gpus = j->gpus, .priority = j->priority,
        .max_attempts = j->max_attempts, .steps = j->train.steps, .after = s->after,
        .n_after = spec_waits_for(j, s->after),
        .start = j->init.kind == INIT_EXPERIMENT ? j->init.experiment : 0,
    };
    return 0;
}

void submission_free(struct submission *s)
{
    free(s->spec_json);
    free(s->cell_json);
    s->spec_json = s->cell_json = NULL;
}

void submissions_free(struct submission *s, int n)
{
    for (int i = 0; s && i < n; i++)
        submission_free(&s[i]);
    free(s);
}

/* Sets a dotted path ("train.lr") in obj, creating objects on the way; a
 * section given by its name (norm "lns") takes its object form first
 * ({"base": "lns"}), so that norm.gains can be set on it. */
static int set_path(json_t *obj, const char *path, json_t *value)
{
    char buf[256];
    if (path_copy(buf, sizeof buf, path, NULL, 0) != 0)
        return -1;  /* a longer key is no field of the spec */
    char *key = buf, *dot;
    int top = 1;
    while ((dot = strchr(key, '.'))) {
        *dot = 0;
        json_t *next = json_object_get(obj, key);
        const char *name_key = top ? spec_name_key(key) : NULL;
        if (json_is_string(next) && name_key) {
            next = json_pack("{s:O}", name_key, next);
            if (!next || json_object_set_new(obj, key, next) != 0)
                return -1;
        } else if (!next) {
            next = json_object();
            if (!next || json_object_set_new(obj, key, next) != 0)
                return -1;
        } else if (!json_is_object(next)) {
            return -1;
        }
        top = 0;
        obj = next;
        key = dot + 1;
    }
    return json_object_set(obj, key, value);
}

/* Longer than any field's path ("norm.lns_sublayers"): set_path's buffer. */
#define GRID_KEY_MAX 255

/* A cell is named for its grid values, e.g. demo-lns-0.002, so that the
 * experiments of a sweep can be told apart in lists; characters a name may
 * not hold become '_'. */
static int name_cell(json_t *spec, json_t *cell)
{
    const char *base = json_string_value(json_object_get(spec, "name"));
    char name[128];
    size_t n = (size_t)snprintf(name, sizeof name, "%s", base ? base : "sweep");
    const char *k;
    json_t *v;
    json_object_foreach(cell, k, v) {
        char part[64];
        if (json_is_string(v))
            snprintf(part, sizeof part, "%s", json_string_value(v));
        else if (json_is_number(v))
            snprintf(part, sizeof part, "%g", json_number_value(v));
        else if (json_is_true(v) || json_is_false(v))
            snprintf(part, sizeof part, "%s", json_is_true(v) ? "true" : "false");
        else
            snprintf(part, sizeof part, "%s", k);
        for (char *p = part; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
                *p = '_';
        if (n < sizeof name)
            n += (size_t)snprintf(name + n, sizeof name - n, "-%s", part);
    }
    return json_object_set_new(spec, "name", json_string(name));
}

/* The later stages of a sweep: then, one spec or a list, each an object
 * without init (it starts from the stage before). *stages NULL when none. */
static int stages_of(json_t *body, json_t **stages, struct spec_error *err)
{
    json_t *then = json_object_get(body, "then");
    *stages = NULL;
    if (!then)
        return 0;
    *stages = json_is_array(then) ? json_incref(then) : json_pack("[O]", then);
    size_t k;
    json_t *st;
    json_array_foreach(*stages, k, st) {
        char field[64];
        snprintf(field, sizeof field, "then[%zu]", k);
        if (!json_is_object(st))
            set_err(err, field, "%s must be a job spec object", field);
        else if (json_object_get(st, "init"))
            set_err(err, field, "%s.init: a later stage starts from the final checkpoint of the stage before it",
                    field);
        else
            continue;
        json_decref(*stages);
        *stages = NULL;
        return -1;
    }
    if (json_array_size(*stages) == 0) {
        set_err(err, "then", "%s", "then must be a spec or a non-empty list of specs");
        json_decref(*stages);
        *stages = NULL;
        return -1;
    }
    return 0;
}

/* Stage k of the cell whose first stage is spec: the stage's spec, named
 * after the cell, with the cell's seed, started from the stage before (its
 * init.from's id is the store's to write: the stage before has none yet). */
static int stage_submission(json_t *stage, size_t k, const json_t *spec, const json_t *cell,
                            const struct submit_rules *rules, struct submission *out,
                            struct spec_error *err)
{
    json_t *s = json_deep_copy(stage);
    const char *own = json_string_value(json_object_get(stage, "name"));
    char name[160], ownbuf[32];
    snprintf(ownbuf, sizeof ownbuf, k ? "ft%zu" : "ft", k + 1);
    snprintf(name, sizeof name, "%s.%s", json_string_value(json_object_get(spec, "name")),
             own ? own : ownbuf);
    json_t *seed = json_object_get(cell, REPLICATE_KEY);
    int bad = !s || json_object_set_new(s, "name", json_string(name)) ||
              json_object_set_new(s, "init", json_pack("{s:{s:i}}", "from", "experiment", 1)) ||
              (seed && set_path(s, REPLICATE_KEY, seed));
    struct spec_error e;
    if (bad || submission_from_json(s, rules, out, &e) != 0) {
        char *cj = json_dumps(cell, JSON_COMPACT);
        snprintf(err->field, sizeof err->field, "then[%zu]%s%.100s", k, bad || !e.field[0] ? "" : ".",
                 bad ? "" : e.field);
        snprintf(err->message, sizeof err->message, "cell %.200s: %.300s", cj ? cj : "?",
                 bad ? "out of memory" : e.message);
        free(cj);
        json_decref(s);
        return -1;
    }
    json_decref(s);
    out->row.stage = (int)k + 1;
    out->row.start = 0;
    /* the stage before, which the placeholder stands for, is the store's to link */
    out->row.n_after = out->spec.n_after;
    return 0;
}

/* The sweep's own name, when it has one: a name as an experiment's is. */
static int check_sweep_name(json_t *body, struct spec_error *err)
{
    json_t *name = json_object_get(body, "name");
    if (!name)
        return 0;
    if (!json_is_string(name)) {
        set_err(err, "name", "%s", "the sweep's name must be a string");
        return -1;
    }
    size_t n = json_string_length(name);
    if (n == 0 || n > 127 || strlen(json_string_value(name)) != n) {
        snprintf(err->field, sizeof err->field, "name");
        snprintf(err->message, sizeof err->message,
                 "the sweep's name must be 1 to 127 bytes (not %zu)", n);
        return -1;
    }
    return spec_check_name(json_string_value(name), "name", err);
}

/* A grid key as it is read: no longer than a field's path can be, its
 * depth (dots) counted once. 0, or -1 with *err. */
static int grid_key(const char *k, json_t *v, int cells, int per, int max_cells, size_t *depth,
                    struct spec_error *err)
{
    size_t len = strlen(k);
    char field[160];
    snprintf(field, sizeof field, "grid.%.120s", k);
    if (len > GRID_KEY_MAX) {
        snprintf(err->field, sizeof err->field, "%.127s", field);
        snprintf(err->message, sizeof err->message,
                 "a grid key of %zu bytes is no field of the spec (a field's path has at most %d)",
                 len, GRID_KEY_MAX);
        return -1;
    }
    if (!json_is_array(v) || json_array_size(v) == 0) {
        set_err(err, field, "%s must be a non-empty list of values", field);
        return -1;
    }
    if ((long)cells * (long)json_array_size(v) * (long)per > max_cells) {
        char lim[32];
        snprintf(lim, sizeof lim, "%d", max_cells);
        set_err(err, "grid", "the grid has more experiments (cells × stages) than the limit of %s", lim);
        return -1;
    }
    *depth = 0;
    for (const char *p = k; *p; p++)
        *depth += *p == '.';
    return 0;
}

int sweep_expand(json_t *body, const struct submit_rules *rules, struct submission **out, int *n,
                 struct spec_error *err)
{
    *out = NULL;
    *n = 0;
    static const char *const allowed[] = {"base", "grid", "name", "then", NULL};
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            ok |= !strcmp(*a, k);
        if (!ok) {
            set_err(err, k, "unknown field \"%s\" (a sweep has base, grid, name and then)", k);
            return -1;
        }
    }
    json_t *base = json_object_get(body, "base"), *grid = json_object_get(body, "grid");
    if (!json_is_object(base)) {
        set_err(err, "base", "%s", "base must be a job spec object");
        return -1;
    }
    if (!json_is_object(grid) || json_object_size(grid) == 0) {
        set_err(err, "grid", "%s", "grid must be a non-empty object of value lists");
        return -1;
    }
    if (check_sweep_name(body, err) != 0)
        return -1;
    size_t axes = json_object_size(grid);
    if (axes > (size_t)rules->max_axes) {
        snprintf(err->field, sizeof err->field, "grid");
        snprintf(err->message, sizeof err->message,
                 "the grid has %zu keys, more than this server's --max-sweep-axes %d", axes,
                 rules->max_axes);
        return -1;
    }
    json_t *stages;
    if (stages_of(body, &stages, err))
        return -1;
    size_t per = 1 + json_array_size(stages);
    const char **keys = calloc(axes, sizeof *keys);
    json_t **vals = calloc(axes, sizeof *vals);
    size_t *idx = calloc(axes, sizeof *idx), *order = calloc(axes, sizeof *order),
           *depth = calloc(axes, sizeof *depth);
    struct submission *subs = NULL;
    int ret = -1, cells = 1;
    if (!keys || !vals || !idx || !order || !depth) {
        set_err(err, "", "%s", "out of memory");
        goto done;
    }
    size_t a = 0;
    json_object_foreach(grid, k, v) {
        if (grid_key(k, v, cells, (int)per, rules->max_cells, &depth[a], err) != 0)
            goto done;
        cells *= (int)json_array_size(v);
        keys[a] = k;
        vals[a++] = v;
    }
    /* the axes by their paths' depth, stable (an insertion sort of at most
     * --max-sweep-axes): a section before its fields */
    for (size_t i = 0; i < axes; i++) {
        size_t j = i;
        for (; j > 0 && depth[order[j - 1]] > depth[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    subs = calloc((size_t)cells * per, sizeof *subs);
    if (!subs) {
        set_err(err, "", "%s", "out of memory");
        goto done;
    }
    for (int c = 0; c < cells; c++) {
        json_t *spec = json_deep_copy(base), *cell = json_object();
        int bad = !spec || !cell;
        for (size_t i = 0; !bad && i < axes; i++)
            json_object_set(cell, keys[i], json_array_get(vals[i], idx[i]));
        /* a whole section before the keys inside it (norm, then norm.gains),
         * whatever the grid's order */
        for (size_t i = 0; !bad && i < axes; i++) {
            size_t ax = order[i];
            json_t *x = json_array_get(vals[ax], idx[ax]);
            if (set_path(spec, keys[ax], x) != 0) {
                char field[160];
                snprintf(field, sizeof field, "grid.%s", keys[ax]);
                set_err(err, field, "%s does not fit the base spec", field);
                json_decref(spec);
                json_decref(cell);
                goto done;
            }
        }
        if (!bad && !json_object_get(grid, "name"))
            bad = name_cell(spec, cell) != 0;
        struct spec_error e;
        struct submission *first = &subs[(size_t)c * per];
        if (bad || submission_from_json(spec, rules, first, &e) != 0) {
            char *cj = cell ? json_dumps(cell, JSON_COMPACT) : NULL;
            snprintf(err->field, sizeof err->field, "%s", bad ? "" : e.field);
            snprintf(err->message, sizeof err->message, "cell %.200s: %.300s", cj ? cj : "?",
                     bad ? "out of memory" : e.message);
            free(cj);
            json_decref(spec);
            json_decref(cell);
            goto done;
        }
        first->cell_json = json_dumps(cell, JSON_COMPACT);
        first->row.cell_json = first->cell_json;
        for (size_t k = 1; k < per; k++) {
            struct submission *sk = &first[k];
            if (stage_submission(json_array_get(stages, k - 1), k - 1, spec, cell, rules, sk,
                                 err)) {
                json_decref(spec);
                json_decref(cell);
                goto done;
            }
            sk->cell_json = json_dumps(cell, JSON_COMPACT);
            sk->row.cell_json = sk->cell_json;
        }
        json_decref(spec);
        json_decref(cell);
        /* odometer over the axes */
        for (size_t i = axes; i-- > 0;) {
            if (++idx[i] < json_array_size(vals[i]))
                break;
            idx[i] = 0;
        }
    }
    *n = cells * (int)per;
    *out = subs;
    subs = NULL;
    ret = 0;
done:
    submissions_free(subs, subs ? cells * (int)per : 0);
    json_decref(stages);
    free(keys);
    free(vals);
    free(idx);
    free(order);
    free(depth);
    return ret;
}
