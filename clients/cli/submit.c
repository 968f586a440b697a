/* cod submit and cod sweep: a spec from a file and flags, queued alone or
 * as a grid. */
#include <stdio.h>
#include <string.h>

#include "clients/cli/args.h"
#include "clients/cli/format.h"
#include "clients/cli/spec_flags.h"
#include "clients/cli/table.h"

static const char submit_usage[] =
    "usage: cod submit [SPEC.json|-] [spec flags] [--idempotency-key K] [--dry-run] [--json]\n"
    "Queues one experiment: the spec file (or stdin, or nothing) with the flags\n"
    "applied on top. --dry-run prints the spec instead of sending it.\n"
    "--idempotency-key K: a retry with the same K returns the first experiment\n"
    "instead of queueing another (scripts that may run twice).\n" SPEC_FLAGS_USAGE;

static const char sweep_usage[] =
    "usage: cod sweep [SPEC.json|-] [spec flags] --grid KEY=V1,V2 [KEY=V1,V2 ...]\n"
    "                 [--then STAGE.json ...] [--idempotency-key K] [--dry-run] [--json]\n"
    "Queues the cartesian product of the grid over the base spec (built as for\n"
    "submit). KEY is a spec flag's name (model, norm, lr, seq-len, ...) or a\n"
    "dotted spec path (train.beta2); KEY=[JSON list] for values with commas.\n"
    "Every word KEY=VALUES after the command is an axis, with or without --grid.\n"
    "--then STAGE.json: a later stage for every cell (a fine-tuning: its spec,\n"
    "without init), started from the cell's final checkpoint once it has\n"
    "succeeded, with the cell's seed; --then again chains another after it.\n"
    "--idempotency-key K: a retry with the same K returns the first sweep.\n"
    "--dry-run prints the request body instead of sending it.\n" SPEC_FLAGS_USAGE;

enum { MAX_OPTS = 48 };

int cmd_submit(struct cli *c, int argc, char **argv)
{
    struct strlist edits = {0};
    int dry = 0, npos;
    struct opt opts[MAX_OPTS] = {OPTS_COMMON(c), {"--dry-run", OPT_FLAG, &dry},
                                 {"--idempotency-key", OPT_STR, &c->idempotency_key}};
    spec_opts_append(opts, MAX_OPTS, &edits);
    int rc = cli_args(c, argc, argv, opts, &npos, submit_usage, 0, 1);
    json_t *spec = NULL, *exp = NULL;
    if (rc != ARGS_GO) {
        strlist_free(&edits);
        return rc;
    }
    rc = spec_build(c, npos ? argv[0] : NULL, &edits, &spec);
    if (!rc && dry)
        rc = print_json(c, spec);
    else if (!rc)
        rc = api_call(c, "POST", "/v1/experiments", spec, 0, &exp);
    if (!rc && exp && c->json)
        rc = print_json(c, exp);
    else if (!rc && exp) {
        char a[64];
        printf("experiment %s (%s) %s: %s %s on %s\n",
               fmt_value(json_object_get(exp, "id"), a, 64),
               jstr(exp, "name"), jstr(exp, "state"), jstr(exp, "model"), jstr(exp, "norm"),
               jstr(exp, "device"));
    }
    json_decref(spec);
    json_decref(exp);
    strlist_free(&edits);
    return rc;
}

/* "norm=lns train.lr=0.001" from a cell's params. */
static void params_text(const json_t *params, char *buf, size_t n)
{
    const char *k;
    json_t *v;
    size_t len = 0;
    buf[0] = 0;
    json_object_foreach((json_t *)params, k, v) {
        char val[128];
        int w = snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", k,
                         fmt_value(v, val, sizeof val));
        if (w < 0 || (size_t)w >= n - len)
            return;
        len += (size_t)w;
    }
}

static void sweep_rows(struct table *t, const json_t *cells)
{
    size_t i;
    json_t *cell;
    json_array_foreach(cells, i, cell) {
        char a[64], p[512];
        params_text(json_object_get(cell, "params"), p, sizeof p);
        table_add(t, "%s", fmt_value(json_object_get(cell, "experiment"), a, 64));
        table_add(t, "%lld", (long long)json_integer_value(json_object_get(cell, "stage")));
        table_add(t, "%s", fmt_value(json_object_get(cell, "state"), a, 64));
        table_add(t, "%s", p);
    }
}

/* The grid's cells, then their later stages (a stage waits for its cell's). */
static int print_sweep(const struct cli *c, const json_t *sw)
{
    const json_t *cells = json_object_get(sw, "cells"), *stages = json_object_get(sw, "stages");
    char a[64];
    printf("sweep %s: %zu experiments\n", fmt_value(json_object_get(sw, "id"), a, 64),
           json_array_size(cells) + json_array_size(stages));
    struct table t;
    table_init(&t, 4);
    table_add(&t, "ID");
    table_add(&t, "STAGE");
    table_add(&t, "STATE");
    table_add(&t, "PARAMS");
    sweep_rows(&t, cells);
    sweep_rows(&t, stages);
    return table_print(c, &t, 2);
}

/* body's "then": the stage files read, in order. */
static int stages_add(const struct cli *c, json_t *body, const struct strlist *files)
{
    json_t *stages = json_array();
    if (!stages || json_object_set_new(body, "then", stages))
        return fail(c, EXIT_USAGE, "out of memory");
    for (int i = 0; i < files->n; i++) {
        json_error_t je;
        json_t *s = json_load_file(files->v[i], JSON_REJECT_DUPLICATES, &je);
        if (!s || !json_is_object(s)) {
            json_decref(s);
            return fail(c, EXIT_USAGE, "--then %s: %s", files->v[i],
                        s ? "not a JSON object" : je.text);
        }
        json_array_append_new(stages, s);
    }
    return EXIT_OK;
}

int cmd_sweep(struct cli *c, int argc, char **argv)
{
    struct strlist edits = {0}, axes = {0}, then = {0};
    int dry = 0, npos;
    struct opt opts[MAX_OPTS] = {OPTS_COMMON(c), {"--dry-run", OPT_FLAG, &dry},
                                 {"--grid", OPT_LIST, &axes}, {"--then", OPT_LIST, &then},
                                 {"--idempotency-key", OPT_STR, &c->idempotency_key}};
    spec_opts_append(opts, MAX_OPTS, &edits);
    int rc = cli_args(c, argc, argv, opts, &npos, sweep_usage, 0, -1);
    if (rc != ARGS_GO) {
        strlist_free(&edits);
        strlist_free(&axes);
        strlist_free(&then);
        return rc;
    }
    const char *file = NULL;
    json_t *grid = json_object(), *base = NULL, *body = NULL, *sw = NULL;
    for (int i = 0; i < npos; i++) {
        if (strchr(argv[i], '='))
            rc = strlist_push(&axes, argv[i]) ? fail(c, EXIT_USAGE, "out of memory") : ARGS_GO;
        else if (file)
            rc = fail(c, EXIT_USAGE, "one spec file at most (\"%s\" and \"%s\")", file, argv[i]);
        else
            file = argv[i];
    }
    for (int i = 0; rc == ARGS_GO && i < axes.n; i++)
        rc = grid_add(c, grid, axes.v[i]) ? EXIT_USAGE : ARGS_GO;
    if (rc == ARGS_GO && !axes.n)
        rc = fail(c, EXIT_USAGE, "no grid: give at least one KEY=V1,V2 axis");
    if (rc == ARGS_GO)
        rc = spec_build(c, file, &edits, &base);
    if (!rc && !(body = json_pack("{s:O,s:O}", "base", base, "grid", grid)))
        rc = fail(c, EXIT_USAGE, "out of memory");
    if (!rc && then.n)
        rc = stages_add(c, body, &then);
    if (!rc && dry)
        rc = print_json(c, body);
    else if (!rc)
        rc = api_call(c, "POST", "/v1/sweeps", body, 0, &sw);
    if (!rc && sw)
        rc = c->json ? print_json(c, sw) : print_sweep(c, sw);
    json_decref(grid);
    json_decref(base);
    json_decref(body);
    json_decref(sw);
    strlist_free(&edits);
    strlist_free(&axes);
    strlist_free(&then);
    return rc;
}
