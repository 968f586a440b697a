/* cod compare: several experiments (or a sweep's cells) side by side: the
 * final eval perplexity as a table, then a per-layer metric (out_var by
 * default) with one column per experiment, where the Curse of Depth shows.
 * A sweep whose grid varies train.seed is compared by replicate groups as
 * the server summarises them: mean ± sd over the seeds, diverged runs
 * counted apart, and the paired comparisons that say whether a difference
 * is within the seed noise. */
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
    "grid parameters; when the grid varies train.seed, also its replicate\n"
    "groups (final eval/ppl as mean ± sd over the finished seeds, n, diverged\n"
    "runs counted apart and never averaged), the paired comparisons of groups\n"
    "that differ in one grid key (mean difference at equal seeds, its 95 %\n"
    "interval and p-value: \"within noise\" when p >= 0.05), and NAME by layer\n"
    "averaged over each group's seeds, one column per group.\n";

enum { MAX_COMPARE = 256 };

/* The rows to compare: {"id", "params"?} from the ids or the sweep (whose
 * view goes to *sw). */
static int targets(struct cli *c, long sweep, int npos, char **argv, json_t **out, json_t **sw)
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
    json_t *cell;
    size_t i;
    snprintf(path, sizeof path, "/v1/sweeps/%ld", sweep);
    int rc = api_call(c, "GET", path, NULL, 0, sw);
    if (rc)
        return rc;
    json_array_foreach(json_object_get(*sw, "cells"), i, cell)
        json_array_append_new(*out, json_pack("{s:O,s:O}", "id", json_object_get(cell, "experiment"),
                                              "params", json_object_get(cell, "params")));
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

/* A grid key the fixed columns already show (NORM, MODEL, NAME). */
static int shown(const char *key)
{
    return !strcmp(key, "norm") || !strcmp(key, "model") || !strcmp(key, "name");
}

static int n_param_cols(const json_t *params)
{
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)params, k, v) n += !shown(k);
    return n;
}

/* ID NAME MODEL NORM [grid params] STATE STEP EVAL_PPL EVAL_LOSS TRAIN_LOSS */
static void figures_table(struct table *t, const json_t *rows)
{
    json_t *params = json_object_get(json_array_get(rows, 0), "params"), *v, *row;
    const char *k;
    size_t i;
    char a[64];
    table_init(t, NPRE + n_param_cols(params) + NPOST);
    for (int h = 0; h < NPRE; h++)
        table_add(t, "%s", pre_head[h]);
    json_object_foreach(params, k, v) if (!shown(k)) table_add(t, "%s", k);
    for (int h = 0; h < NPOST; h++)
        table_add(t, "%s", post_head[h]);
    json_array_foreach(rows, i, row) {
        for (int h = 0; h < NPRE; h++)
            table_add(t, "%s", fmt_value(json_object_get(row, pre_keys[h]), a, 64));
        json_object_foreach(params, k, v) if (!shown(k))
            table_add(t, "%s", fmt_value(json_object_get(json_object_get(row, "params"), k), a, 64));
        for (int h = 0; h < NPOST; h++)
            table_add(t, "%s", fmt_value(json_object_get(row, post_keys[h]), a, 64));
    }
}

/* A group's grid values (the seed left out) as "norm=lns model.n_layers=12". */
static const char *group_name(const json_t *g, char *buf, size_t n)
{
    const char *k;
    json_t *v;
    size_t len = 0;
    char a[64];
    buf[0] = 0;
    json_object_foreach(json_object_get(g, "params"), k, v) if (len < n) len +=
        (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", k, fmt_value(v, a, sizeof a));
    return buf;
}

/* mean ± sd, or the mean alone (one seed), or "-" */
static const char *mean_sd(const json_t *summary, char *buf, size_t n)
{
    char a[64], b[64];
    const json_t *sd = json_object_get(summary, "sd");
    if (!json_is_number(json_object_get(summary, "mean")))
        snprintf(buf, n, "-");
    else if (json_is_number(sd))
        snprintf(buf, n, "%s ± %s", fmt_value(json_object_get(summary, "mean"), a, 64), fmt_value(sd, b, 64));
    else
        snprintf(buf, n, "%s", fmt_value(json_object_get(summary, "mean"), a, 64));
    return buf;
}

/* GROUP [grid params] N DIVERGED UNFINISHED EVAL_PPL MIN MAX */
static int groups_table(const struct cli *c, const json_t *sw)
{
    const json_t *groups = json_object_get(sw, "groups"), *params, *g, *v;
    params = json_object_get(json_array_get(groups, 0), "params");
    const char *k;
    size_t i;
    char a[64], b[160];
    struct table t;
    table_init(&t, 1 + (int)json_object_size((json_t *)params) + 6);
    table_add(&t, "GROUP");
    json_object_foreach((json_t *)params, k, v) table_add(&t, "%s", k);
    static const char *const head[] = {"N", "DIVERGED", "OTHER", "EVAL_PPL (MEAN ± SD)", "MIN", "MAX"};
    for (int h = 0; h < 6; h++)
        table_add(&t, "%s", head[h]);
    json_array_foreach(groups, i, g) {
        const json_t *ppl = json_object_get(g, "eval/ppl");
        table_add(&t, "%s", fmt_value(json_object_get(g, "group"), a, 64));
        json_object_foreach((json_t *)params, k, v)
            table_add(&t, "%s", fmt_value(json_object_get(json_object_get(g, "params"), k), a, 64));
        table_add(&t, "%s", fmt_value(json_object_get(g, "n"), a, 64));
        table_add(&t, "%s", fmt_value(json_object_get(g, "diverged"), a, 64));
        /* what neither counts nor diverged: still queued or running, failed, cancelled */
        json_int_t other = json_integer_value(json_object_get(g, "unfinished")) +
                           json_integer_value(json_object_get(g, "failed")) +
                           json_integer_value(json_object_get(g, "cancelled"));
        table_add(&t, "%lld", (long long)other);
        table_add(&t, "%s", mean_sd(ppl, b, sizeof b));
        table_add(&t, "%s", fmt_value(json_object_get(ppl, "min"), a, 64));
        table_add(&t, "%s", fmt_value(json_object_get(ppl, "max"), a, 64));
    }
    printf("\nreplicate groups (cells equal but for %s): final eval/ppl over the finished seeds\n",
           jstr(sw, "replicates"));
    return table_print(c, &t, 0);
}

/* A ROW PER COMPARISON: A B PAIRS MEAN_DIFF 95%_CI P READING */
static int comparisons_table(const struct cli *c, const json_t *sw)
{
    const json_t *groups = json_object_get(sw, "groups"), *x;
    size_t i;
    char a[64], b[64], ga[256], gb[256];
    struct table t;
    table_init(&t, 7);
    static const char *const head[] = {"A", "B", "PAIRS", "MEAN_DIFF (A-B)", "95% CI", "P", "READING"};
    for (int h = 0; h < 7; h++)
        table_add(&t, "%s", head[h]);
    json_array_foreach(json_object_get(sw, "comparisons"), i, x) {
        table_add(&t, "%s", group_name(json_array_get(groups, (size_t)json_integer_value(json_object_get(x, "a"))),
                                       ga, sizeof ga));
        table_add(&t, "%s", group_name(json_array_get(groups, (size_t)json_integer_value(json_object_get(x, "b"))),
                                       gb, sizeof gb));
        table_add(&t, "%s", fmt_value(json_object_get(x, "pairs"), a, 64));
        table_add(&t, "%s", fmt_value(json_object_get(x, "mean_diff"), a, 64));
        const json_t *ci = json_object_get(x, "ci95");
        if (json_is_array(ci))
            table_add(&t, "[%s, %s]", fmt_value(json_array_get(ci, 0), a, 64), fmt_value(json_array_get(ci, 1), b, 64));
        else
            table_add(&t, "-");
        table_add(&t, "%s", fmt_value(json_object_get(x, "p"), a, 64));
        const json_t *noise = json_object_get(x, "within_noise");
        table_add(&t, "%s", json_is_null(noise) || !noise ? "fewer than 2 pairs"
                            : json_is_true(noise) ? "within seed noise"
                            : json_number_value(json_object_get(x, "mean_diff")) < 0 ? "A lower"
                                                                                   : "B lower");
    }
    printf("\npaired comparisons of eval/ppl at equal seeds (two-sided paired t-test)\n");
    return table_print(c, &t, 0);
}

/* NAME averaged over each group's seeds by the server, at every step. */
static int group_layers(struct cli *c, long sweep, const char *name, json_t **series)
{
    char path[1024];
    snprintf(path, sizeof path, "/v1/sweeps/%ld/series", sweep);
    int rc = query_add(c, path, sizeof path, "name", name);
    return rc ? rc : api_call(c, "GET", path, NULL, 0, series);
}

/* LAYER, then a column "G<group>" per replicate group: the series at its
 * last step. */
static int group_layers_table(const struct cli *c, const json_t *series, const char *name)
{
    const json_t *g;
    size_t i, depth = 0;
    json_array_foreach(json_object_get(series, "groups"), i, g) {
        const json_t *layer = json_object_get(g, "layer");
        for (size_t j = 0; j < json_array_size(layer); j++)
            if ((size_t)json_integer_value(json_array_get(layer, j)) + 1 > depth)
                depth = (size_t)json_integer_value(json_array_get(layer, j)) + 1;
    }
    if (!depth) {
        printf("\nno %s recorded yet\n", name);
        return 0;
    }
    struct table t;
    char a[64];
    table_init(&t, 1 + (int)json_array_size(json_object_get(series, "groups")));
    table_add(&t, "LAYER");
    json_array_foreach(json_object_get(series, "groups"), i, g)
        table_add(&t, "G%s", fmt_value(json_object_get(g, "group"), a, 64));
    for (size_t layer = 0; layer < depth; layer++) {
        table_add(&t, "%zu", layer);
        json_array_foreach(json_object_get(series, "groups"), i, g) {
            const json_t *steps = json_object_get(g, "step"), *found = NULL;
            json_int_t last = -1;
            for (size_t j = 0; j < json_array_size(steps); j++)
                if (json_integer_value(json_array_get(steps, j)) > last)
                    last = json_integer_value(json_array_get(steps, j));
            for (size_t j = 0; j < json_array_size(steps); j++)
                if (json_integer_value(json_array_get(steps, j)) == last &&
                    json_integer_value(json_array_get(json_object_get(g, "layer"), j)) == (json_int_t)layer)
                    found = json_array_get(json_object_get(g, "mean"), j);
            table_add(&t, "%s", fmt_value(found, a, 64));
        }
    }
    printf("\n%s by layer at the last step, mean over each group's finished seeds\n", name);
    return table_print(c, &t, 0);
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
    json_t *rows = NULL, *sw = NULL, *series = NULL;
    rc = targets(c, sweep, npos, argv, &rows, &sw);
    rc = rc ? rc : gather(c, rows, layer_name);
    int grouped = sw && json_is_string(json_object_get(sw, "replicates"));
    if (!rc && grouped)
        rc = group_layers(c, sweep, layer_name, &series);
    if (!rc && c->json) {
        json_t *o = grouped ? json_pack("{s:O,s:O,s:O,s:O}", "experiments", rows, "groups",
                                        json_object_get(sw, "groups"), "comparisons",
                                        json_object_get(sw, "comparisons"), "layers", series)
                            : json_pack("{s:O}", "experiments", rows);
        rc = o ? print_json(c, o) : fail(c, EXIT_REFUSED, "out of memory");
        json_decref(o);
    } else if (!rc && grouped) {
        struct table t;
        figures_table(&t, rows);
        rc = table_print(c, &t, 0);
        rc = rc ? rc : groups_table(c, sw);
        rc = rc ? rc : comparisons_table(c, sw);
        rc = rc ? rc : group_layers_table(c, series, layer_name);
    } else if (!rc) {
        rc = print_compare(c, rows, layer_name);
    }
    json_decref(rows);
    json_decref(sw);
    json_decref(series);
    return rc;
}
