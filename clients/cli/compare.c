/* cod compare: several experiments (or a sweep's cells) side by side: the
 * final eval perplexity as a table, then a per-layer metric (out_var by
 * default) with one column per experiment, where the Curse of Depth shows. */
#include <stdio.h>
#include <string.h>

#include "clients/cli/args.h"
#include "clients/cli/format.h"
#include "clients/cli/table.h"

static const char compare_usage[] =
    "usage: cod compare ID... [--layers NAME] [--json]\n"
    "       cod compare --sweep ID [--layers NAME] [--json]\n"
    "The final (newest) eval/ppl, eval/loss and train/loss of each experiment,\n"
    "and the per-layer NAME (default layer/out_var) at each one's newest step,\n"
    "one column per experiment. With --sweep, the sweep's cells and their\n"
    "grid parameters.\n";

enum { MAX_COMPARE = 256 };

/* The rows to compare: {"id", "params"?} from the ids or the sweep. */
static int targets(struct cli *c, long sweep, int npos, char **argv, json_t **out)
{
    *out = json_array();
    if (!*out)
        return fail(c, EXIT_REFUSED, "out of memory");
    if (!sweep) {
        for (int i = 0; i < npos; i++) {
            long id;
            int rc = id_arg(c, argv[i], "experiment", &id);
            if (rc)
                return rc;
            json_array_append_new(*out, json_pack("{s:I}", "id", (json_int_t)id));
        }
        return 0;
    }
    char path[64];
    json_t *sw, *cell;
    size_t i;
    snprintf(path, sizeof path, "/v1/sweeps/%ld", sweep);
    int rc = api_call(c, "GET", path, NULL, 0, &sw);
    if (rc)
        return rc;
    json_array_foreach(json_object_get(sw, "cells"), i, cell)
        json_array_append_new(*out, json_pack("{s:O,s:O}", "id", json_object_get(cell, "experiment"),
                                              "params", json_object_get(cell, "params")));
    json_decref(sw);
    return 0;
}

static json_t *latest_value(const json_t *e, const char *name)
{
    return json_object_get(json_object_get(json_object_get(e, "latest"), name), "value");
}

/* Fills each row with the experiment's figures and its layer values (null
 * when it has none yet). */
static int gather(struct cli *c, json_t *rows, const char *layer_name)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        long id = (long)json_integer_value(json_object_get(row, "id"));
        char path[1024];
        json_t *e, *l;
        snprintf(path, sizeof path, "/v1/experiments/%ld", id);
        int rc = api_call(c, "GET", path, NULL, 0, &e);
        if (rc)
            return rc;
        static const char *const keys[] = {"name", "model", "norm", "state", "step"};
        for (int k = 0; k < 5; k++)
            json_object_set(row, keys[k], json_object_get(e, keys[k]));
        static const char *const figures[] = {"eval/ppl", "eval/loss", "train/loss"};
        for (int k = 0; k < 3; k++) {
            json_t *v = latest_value(e, figures[k]);
            json_object_set_new(row, figures[k], v ? json_incref(v) : json_null());
        }
        json_decref(e);
        snprintf(path, sizeof path, "/v1/experiments/%ld/layers", id);
        rc = query_add(c, path, sizeof path, "name", layer_name);
        /* 404 here: the experiment exists (read just now) but has no such series yet */
        rc = rc ? rc : api_call(c, "GET", path, NULL, 404, &l);
        if (rc)
            return rc;
        json_object_set_new(row, "layers", l ? l : json_null());
    }
    return 0;
}

static const char *const pre_keys[] = {"id", "name", "model", "norm"};
static const char *const pre_head[] = {"ID", "NAME", "MODEL", "NORM"};
static const char *const post_keys[] = {"state", "step", "eval/ppl", "eval/loss", "train/loss"};
static const char *const post_head[] = {"STATE", "STEP", "EVAL_PPL", "EVAL_LOSS", "TRAIN_LOSS"};
enum { NPRE = 4, NPOST = 5 };

/* ID NAME MODEL NORM [grid params] STATE STEP EVAL_PPL EVAL_LOSS TRAIN_LOSS */
static void figures_table(struct table *t, const json_t *rows)
{
    json_t *params = json_object_get(json_array_get(rows, 0), "params"), *v, *row;
    const char *k;
    size_t i;
    char a[64];
    table_init(t, NPRE + (int)json_object_size(params) + NPOST);
    for (int h = 0; h < NPRE; h++)
        table_add(t, "%s", pre_head[h]);
    json_object_foreach(params, k, v) table_add(t, "%s", k);
    for (int h = 0; h < NPOST; h++)
        table_add(t, "%s", post_head[h]);
    json_array_foreach(rows, i, row) {
        for (int h = 0; h < NPRE; h++)
            table_add(t, "%s", fmt_value(json_object_get(row, pre_keys[h]), a, 64));
        json_object_foreach(params, k, v)
            table_add(t, "%s", fmt_value(json_object_get(json_object_get(row, "params"), k), a, 64));
        for (int h = 0; h < NPOST; h++)
            table_add(t, "%s", fmt_value(json_object_get(row, post_keys[h]), a, 64));
    }
}

/* LAYER, then a column "#ID NORM" per experiment; 0 when none has layer values. */
static int layers_table(struct table *t, const json_t *rows)
{
    size_t i, depth = 0;
    json_t *row;
    char a[64];
    json_array_foreach(rows, i, row) {
        size_t n = json_array_size(json_object_get(json_object_get(row, "layers"), "layers"));
        depth = n > depth ? n : depth;
    }
    if (!depth)
        return 0;
    table_init(t, 1 + (int)json_array_size(rows));
    table_add(t, "LAYER");
    /* the norm beside the id: the variants are what a reader compares */
    json_array_foreach(rows, i, row) {
        const char *norm = json_string_value(json_object_get(row, "norm"));
        table_add(t, "#%s%s%s", fmt_value(json_object_get(row, "id"), a, 64), norm ? " " : "",
                  norm ? norm : "");
    }
    for (size_t layer = 0; layer < depth; layer++) {
        table_add(t, "%zu", layer);
        json_array_foreach(rows, i, row) {
            json_t *x, *found = NULL;
            size_t j;
            json_array_foreach(json_object_get(json_object_get(row, "layers"), "layers"), j, x)
                if ((size_t)json_integer_value(json_object_get(x, "layer")) == layer)
                    found = json_object_get(x, "value");
            table_add(t, "%s", fmt_value(found, a, 64));
        }
    }
    return 1;
}

static int print_compare(const struct cli *c, const json_t *rows, const char *layer_name)
{
    struct table t;
    figures_table(&t, rows);
    int rc = table_print(c, &t, 0);
    if (!rc && layers_table(&t, rows)) {
        size_t i;
        json_t *row;
        char a[64], b[64];
        printf("\n%s at each one's newest step (", layer_name);
        json_array_foreach(rows, i, row)
            printf("%s#%s: %s", i ? ", " : "", fmt_value(json_object_get(row, "id"), a, 64),
                   fmt_value(json_object_get(json_object_get(row, "layers"), "step"), b, 64));
        printf(")\n");
        rc = table_print(c, &t, 0);
    } else if (!rc) {
        printf("\nno %s recorded yet\n", layer_name);
    }
    return rc;
}

int cmd_compare(struct cli *c, int argc, char **argv)
{
    long sweep = 0;
    const char *layer_name = "layer/out_var";
    int npos;
    const struct opt opts[] = {OPTS_COMMON(c),
                               {"--sweep", OPT_LONG, &sweep},
                               {"--layers", OPT_STR, &layer_name},
                               {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, compare_usage, 0, MAX_COMPARE);
    if (rc != ARGS_GO)
        return rc;
    if (!sweep == !npos)
        return fail(c, EXIT_USAGE, "give experiment ids or --sweep ID (one of the two)");
    json_t *rows;
    rc = targets(c, sweep, npos, argv, &rows);
    rc = rc ? rc : gather(c, rows, layer_name);
    if (!rc && c->json) {
        json_t *o = json_pack("{s:O}", "experiments", rows);
        rc = o ? print_json(c, o) : fail(c, EXIT_REFUSED, "out of memory");
        json_decref(o);
    } else if (!rc) {
        rc = print_compare(c, rows, layer_name);
    }
    json_decref(rows);
    return rc;
}
