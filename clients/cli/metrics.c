/* cod metrics: an experiment's series (or one step's per-layer values) as
 * CSV or JSON. */
#include <stdio.h>
#include <string.h>

#include "clients/cli/args.h"

static const char metrics_usage[] =
    "usage: cod metrics ID [--name NAME]... [--from STEP] [--to STEP] [--every K]\n"
    "                      [--csv | --json]\n"
    "       cod metrics ID --layers NAME [--step STEP] [--csv | --json]\n"
    "Scalar series (every one without --name; every K-th point and the newest),\n"
    "or the per-layer values of a layer/ metric at STEP (default the newest).\n"
    "CSV (the default) has the columns step,name,layer,value; an empty value\n"
    "is a non-finite one, an empty layer a scalar. --json prints the server's\n"
    "JSON (the series of several --name merged into one object).\n";

/* A value as CSV: shortest exact-enough text, empty for null. */
static void csv_value(const json_t *v)
{
    if (json_is_integer(v))
        printf("%" JSON_INTEGER_FORMAT "\n", json_integer_value(v));
    else if (json_is_number(v))
        printf("%.10g\n", json_number_value(v));
    else
        putchar('\n');
}

static void csv_series(const json_t *series)
{
    const char *name;
    json_t *pts, *p;
    size_t i;
    json_object_foreach((json_t *)series, name, pts) json_array_foreach(pts, i, p)
    {
        printf("%" JSON_INTEGER_FORMAT ",%s,,", json_integer_value(json_array_get(p, 0)), name);
        csv_value(json_array_get(p, 1));
    }
}

static void csv_layers(const json_t *l)
{
    json_t *x;
    size_t i;
    json_array_foreach(json_object_get(l, "layers"), i, x) {
        printf("%" JSON_INTEGER_FORMAT ",%s,%" JSON_INTEGER_FORMAT ",",
               json_integer_value(json_object_get(l, "step")),
               jstr(l, "name"),
               json_integer_value(json_object_get(x, "layer")));
        csv_value(json_object_get(x, "value"));
    }
}

/* The series of one name (or all, for NULL) merged into *all. */
static int fetch_series(struct cli *c, const char *base, const char *name, json_t **all)
{
    char path[2048];
    json_t *one;
    snprintf(path, sizeof path, "%s", base);
    int rc = query_add(c, path, sizeof path, "name", name);
    if (!rc)
        rc = api_call(c, "GET", path, NULL, 0, &one);
    if (rc)
        return rc;
    if (!*all) {
        *all = one;
        return 0;
    }
    json_object_update(json_object_get(*all, "series"), json_object_get(one, "series"));
    json_decref(one);
    return 0;
}

int cmd_metrics(struct cli *c, int argc, char **argv)
{
    struct strlist names = {0};
    long from = -1, to = -1, every = -1, step = -1;
    const char *layers = NULL;
    int csv = 0, npos;
    const struct opt opts[] = {OPTS_COMMON(c),
                               {"--name", OPT_LIST, &names},
                               {"--from", OPT_LONG, &from},
                               {"--to", OPT_LONG, &to},
                               {"--every", OPT_LONG, &every},
                               {"--layers", OPT_STR, &layers},
                               {"--step", OPT_LONG, &step},
                               {"--csv", OPT_FLAG, &csv},
                               {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, metrics_usage, 1, 1);
    long id = 0;
    if (rc == ARGS_GO && id_arg(c, argv[0], "experiment", &id))
        rc = EXIT_USAGE;
    else if (rc == ARGS_GO && csv && c->json)
        rc = fail(c, EXIT_USAGE, "--csv or --json, not both");
    else if (rc == ARGS_GO && layers && (names.n || from >= 0 || to >= 0 || every >= 0))
        rc = fail(c, EXIT_USAGE, "--layers takes --step, not --name, --from, --to or --every");
    else if (rc == ARGS_GO && !layers && step >= 0)
        rc = fail(c, EXIT_USAGE, "--step goes with --layers");
    if (rc != ARGS_GO) {
        strlist_free(&names);
        return rc;
    }
    char base[512], num[32];
    const long vals[] = {from, to, every, step};
    static const char *const keys[] = {"from", "to", "every", "step"};
    snprintf(base, sizeof base, "/v1/experiments/%ld/%s", id, layers ? "layers" : "metrics");
    rc = layers ? query_add(c, base, sizeof base, "name", layers) : 0;
    for (int i = 0; !rc && i < 4; i++) {
        snprintf(num, sizeof num, "%ld", vals[i]);
        rc = query_add(c, base, sizeof base, keys[i], vals[i] >= 0 ? num : NULL);
    }
    json_t *out = NULL;
    if (!rc && layers)
        rc = api_call(c, "GET", base, NULL, 0, &out);
    for (int i = 0; !rc && !layers && i < (names.n ? names.n : 1); i++)
        rc = fetch_series(c, base, names.n ? names.v[i] : NULL, &out);
    if (!rc && c->json)
        rc = print_json(c, out);
    else if (!rc) {
        printf("step,name,layer,value\n");
        if (layers)
            csv_layers(out);
        else
            csv_series(json_object_get(out, "series"));
    }
    json_decref(out);
    strlist_free(&names);
    return rc;
}
