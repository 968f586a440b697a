/* cod ls, show, workers and cancel: the server's views as tables. */
#include <stdio.h>
#include <string.h>

#include "clients/cli/args.h"
#include "clients/cli/format.h"
#include "clients/cli/table.h"

static const char ls_usage[] =
    "usage: cod ls [--state S] [--norm N] [--model M] [--sweep ID] [--limit N]\n"
    "              [--cursor C | --all] [--json]\n"
    "Lists experiments, newest first: one page of --limit (default 50; the\n"
    "cursor of the next page is told on stderr), or every page with --all.\n"
    "S is waiting, queued, running, succeeded, failed, cancelled or blocked.\n"
    "AFTER: the experiments one waits for (its chain).\n";

static const char show_usage[] = "usage: cod show ID [--json]\n"
                                 "An experiment: state, progress, attempts, worker, its chain\n"
                                 "(what it waits for, what waits for it), latest metrics.\n";

static const char workers_usage[] =
    "usage: cod workers [--json]\n"
    "       cod workers rm ID... | prune\n"
    "Workers: device, capacity, state, heartbeat age, experiments. A state is\n"
    "idle, busy, offline (it said it stopped) or lost (silent for longer than\n"
    "a lease). rm removes workers that are offline or lost and hold no run;\n"
    "prune removes every such worker. Exit 1 if the server refused any.\n";

static const char cancel_usage[] =
    "usage: cod cancel [--chain] ID... [--json]\n"
    "Cancels experiments: a waiting or queued one at once, a running one at its\n"
    "next heartbeat. What waits for a cancelled one is blocked; with --chain it\n"
    "is cancelled too, however far down its chain. Exit 1 if the server refused\n"
    "any (e.g. one already finished, without --chain).\n";

/* "3,7" of a list of ids (or of objects with an id), "-" when empty. */
static void id_list(const json_t *a, char *out, size_t n)
{
    size_t i, len = 0;
    json_t *x;
    out[0] = 0;
    json_array_foreach(a, i, x) {
        char v[64];
        const json_t *id = json_is_object(x) ? json_object_get(x, "id") : x;
        int w = snprintf(out + len, n - len, "%s%s", i ? "," : "", fmt_value(id, v, sizeof v));
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    if (!len)
        snprintf(out, n, "-");
}

static int print_experiments(const struct cli *c, const json_t *list)
{
    static const char *const head[] = {"ID",   "NAME",     "MODEL",  "NORM", "DEVICE",
                                       "STATE", "STEP", "PROGRESS", "WORKER", "AFTER"};
    struct table t;
    table_init(&t, 10);
    for (int i = 0; i < 10; i++)
        table_add(&t, "%s", head[i]);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        char a[64], b[64], after[128];
        table_add(&t, "%s", fmt_value(json_object_get(e, "id"), a, 64));
        table_add(&t, "%s", jstr(e, "name"));
        table_add(&t, "%s", jstr(e, "model"));
        table_add(&t, "%s", jstr(e, "norm"));
        table_add(&t, "%s", jstr(e, "device"));
        table_add(&t, "%s%s", jstr(e, "state"),
                  json_is_true(json_object_get(e, "cancel_requested")) &&
                          !strcmp(jstr(e, "state"), "running")
                      ? " (cancelling)"
                      : "");
        table_add(&t, "%s/%s", fmt_value(json_object_get(e, "step"), a, 64),
                  fmt_value(json_object_get(e, "steps"), b, 64));
        table_add(&t, "%.1f%%", 100 * json_number_value(json_object_get(e, "progress")));
        table_add(&t, "%s", fmt_value(json_object_get(e, "worker"), a, 64));
        id_list(json_object_get(e, "after"), after, sizeof after);
        table_add(&t, "%s", after);
    }
    return table_print(c, &t, 0);
}

int cmd_ls(struct cli *c, int argc, char **argv)
{
    const char *state = NULL, *norm = NULL, *model = NULL, *cursor = NULL;
    long sweep = 0, limit = 50;
    int all = 0, npos;
    const struct opt opts[] = {OPTS_COMMON(c),
                               {"--state", OPT_STR, &state},
                               {"--norm", OPT_STR, &norm},
                               {"--model", OPT_STR, &model},
                               {"--sweep", OPT_LONG, &sweep},
                               {"--limit", OPT_LONG, &limit},
                               {"--cursor", OPT_STR, &cursor},
                               {"--all", OPT_FLAG, &all},
                               {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, ls_usage, 0, 0);
    if (rc != ARGS_GO)
        return rc;
    char base[2048] = "/v1/experiments", num[32];
    snprintf(num, sizeof num, "%ld", limit);
    rc = query_add(c, base, sizeof base, "limit", num);
    if (sweep) {
        snprintf(num, sizeof num, "%ld", sweep);
        rc = rc ? rc : query_add(c, base, sizeof base, "sweep", num);
    }
    rc = rc ? rc : query_add(c, base, sizeof base, "state", state);
    rc = rc ? rc : query_add(c, base, sizeof base, "norm", norm);
    rc = rc ? rc : query_add(c, base, sizeof base, "model", model);
    json_t *acc = json_array(), *page = NULL;
    char cur[64];
    if (!acc && !rc)
        rc = fail(c, EXIT_REFUSED, "out of memory");
    /* Each page asks for the ones older than the cursor the last one gave. */
    do {
        char path[2200];
        snprintf(path, sizeof path, "%s", base);
        json_decref(page);
        page = NULL;
        rc = rc ? rc : query_add(c, path, sizeof path, "cursor", cursor);
        rc = rc ? rc : api_call(c, "GET", path, NULL, 0, &page);
        if (rc)
            break;
        json_array_extend(acc, json_object_get(page, "experiments"));
        const char *next = json_string_value(json_object_get(page, "next_cursor"));
        cursor = next && snprintf(cur, sizeof cur, "%s", next) < (int)sizeof cur ? cur : NULL;
    } while (all && cursor);
    if (!rc && c->json && all)
        json_object_set(page, "experiments", acc);
    if (!rc && c->json)
        rc = print_json(c, page);
    else if (!rc) {
        rc = print_experiments(c, acc);
        if (!rc && cursor)
            fprintf(stderr, "more: --cursor %s for the next page, or --all\n", cursor);
    }
    json_decref(acc);
    json_decref(page);
    return rc;
}

/* One "  key  value" line of show, skipped when the value is null. */
static void field(const char *key, const json_t *v, const char *text)
{
    if (v && !json_is_null(v))
        printf("  %-10s %s\n", key, text);
}

/* The server counts lapsed leases ("attempts"); a person asks which attempt
 * is running, or ended the experiment. */
static void attempt_text(const json_t *e, char *out, size_t n)
{
    long lapsed = (long)json_integer_value(json_object_get(e, "attempts"));
    long max = (long)json_integer_value(json_object_get(e, "max_attempts"));
    const char *state = jstr(e, "state");
    if (!json_is_number(json_object_get(e, "started")))
        snprintf(out, n, "none yet (%ld allowed)", max);
    else if (!strcmp(state, "queued"))
        snprintf(out, n, "%ld of %ld lapsed; the next waits for a worker", lapsed, max);
    else if (lapsed >= max)
        snprintf(out, n, "%ld of %ld, each lease lapsed", lapsed, max);
    else if (lapsed)
        snprintf(out, n, "%ld of %ld, after %ld lapsed lease%s", lapsed + 1, max, lapsed,
                 lapsed == 1 ? "" : "s");
    else
        snprintf(out, n, "1 of %ld", max);
}

/* The chain around an experiment: "after  12 pre-9m (succeeded)", one a line. */
static void chain_lines(const char *key, const json_t *links)
{
    size_t i;
    json_t *x;
    json_array_foreach(links, i, x) {
        char a[64];
        printf("  %-10s %s %s (%s)\n", i ? "" : key, fmt_value(json_object_get(x, "id"), a, 64),
               jstr(x, "name"), jstr(x, "state"));
    }
}

static int print_experiment(const struct cli *c, const json_t *e)
{
    char a[64], b[64], line[256];
    const json_t *spec = json_object_get(e, "spec"), *train = json_object_get(spec, "train");
    printf("experiment %s: %s\n", fmt_value(json_object_get(e, "id"), a, 64), jstr(e, "name"));
    snprintf(line, sizeof line, "%s, step %s of %s (%.1f%%)%s", jstr(e, "state"),
             fmt_value(json_object_get(e, "step"), a, 64),
             fmt_value(json_object_get(e, "steps"), b, 64),
             100 * json_number_value(json_object_get(e, "progress")),
             json_is_true(json_object_get(e, "cancel_requested")) ? ", cancel requested" : "");
    field("state", json_object_get(e, "state"), line);
    field("model", json_object_get(e, "model"), jstr(e, "model"));
    field("norm", json_object_get(e, "norm"), jstr(e, "norm"));
    field("device", json_object_get(e, "device"), jstr(e, "device"));
    char lr[32], sl[32], bs[32];
    snprintf(line, sizeof line, "lr %s, seq_len %s, batch %s seqs",
             fmt_value(json_object_get(train, "lr"), lr, 32),
             fmt_value(json_object_get(train, "seq_len"), sl, 32),
             fmt_value(json_object_get(train, "batch_seqs"), bs, 32));
    field("train", train, line);
    attempt_text(e, line, sizeof line);
    field("attempt", json_object_get(e, "attempts"), line);
    field("priority", json_object_get(e, "priority"),
          fmt_value(json_object_get(e, "priority"), a, 64));
    snprintf(line, sizeof line, "%s (run %s)", fmt_value(json_object_get(e, "worker"), a, 64),
             fmt_value(json_object_get(e, "run"), b, 64));
    field("worker", json_object_get(e, "worker"), line);
    field("sweep", json_object_get(e, "sweep"), fmt_value(json_object_get(e, "sweep"), a, 64));
    static const char *const times[] = {"created", "started", "finished"};
    for (int i = 0; i < 3; i++)
        field(times[i], json_object_get(e, times[i]),
              fmt_time(json_object_get(e, times[i]), a, 64));
    field("reason", json_object_get(e, "reason"), jstr(e, "reason"));
    chain_lines("after", json_object_get(e, "after"));
    chain_lines("then", json_object_get(e, "then"));
    const json_t *latest = json_object_get(e, "latest");
    if (!json_object_size(latest))
        return 0;
    printf("latest metrics:\n");
    struct table t;
    table_init(&t, 3);
    table_add(&t, "NAME");
    table_add(&t, "STEP");
    table_add(&t, "VALUE");
    const char *k;
    json_t *m;
    json_object_foreach((json_t *)latest, k, m) {
        table_add(&t, "%s", k);
        table_add(&t, "%s", fmt_value(json_object_get(m, "step"), a, 64));
        table_add(&t, "%s", fmt_value(json_object_get(m, "value"), a, 64));
    }
    return table_print(c, &t, 2);
}

/* GET path, then the answer as JSON with --json, else through human(). */
static int get_and_print(struct cli *c, const char *path,
                         int (*human)(const struct cli *, const json_t *))
{
    json_t *o;
    int rc = api_call(c, "GET", path, NULL, 0, &o);
    if (!rc)
        rc = c->json ? print_json(c, o) : human(c, o);
    json_decref(o);
    return rc;
}

int cmd_show(struct cli *c, int argc, char **argv)
{
    int npos;
    long id;
    const struct opt opts[] = {OPTS_COMMON(c), {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, show_usage, 1, 1);
    if (rc != ARGS_GO || (rc = id_arg(c, argv[0], "experiment", &id)))
        return rc;
    char path[64];
    snprintf(path, sizeof path, "/v1/experiments/%ld", id);
    return get_and_print(c, path, print_experiment);
}

static int print_workers(const struct cli *c, const json_t *answer)
{
    static const char *const head[] = {"ID",    "NAME",      "DEVICE",
                                       "SLOTS", "STATE",     "HEARTBEAT",
                                       "EXPERIMENTS"};
    struct table t;
    table_init(&t, 7);
    for (int i = 0; i < 7; i++)
        table_add(&t, "%s", head[i]);
    size_t i, j;
    json_t *w, *x;
    json_array_foreach(json_object_get(answer, "workers"), i, w) {
        char a[64], exps[256] = "";
        size_t len = 0;
        table_add(&t, "%s", fmt_value(json_object_get(w, "id"), a, 64));
        table_add(&t, "%s", jstr(w, "name"));
        table_add(&t, "%s", jstr(w, "device"));
        table_add(&t, "%s", fmt_value(json_object_get(w, "capacity"), a, 64));
        table_add(&t, "%s", jstr(w, "state"));
        table_add(&t, "%s ago",
                  fmt_duration(json_number_value(json_object_get(w, "heartbeat_age_s")), a, 64));
        json_array_foreach(json_object_get(w, "experiments"), j, x) {
            int n = snprintf(exps + len, sizeof exps - len, "%s%s", j ? "," : "",
                             fmt_value(x, a, 64));
            if (n < 0 || (size_t)n >= sizeof exps - len)
                break;
            len += (size_t)n;
        }
        table_add(&t, "%s", len ? exps : "-");
    }
    return table_print(c, &t, 0);
}

/* Checks that every word is an id of what, then calls one() on each: every
 * id is tried, the first failure decides the exit code. */
static int each_id(struct cli *c, char **words, int n, const char *what,
                   int (*one)(struct cli *, long))
{
    long id;
    for (int i = 0; i < n; i++) {
        int rc = id_arg(c, words[i], what, &id);
        if (rc)
            return rc;
    }
    int first = EXIT_OK;
    for (int i = 0; i < n; i++) {
        id_arg(c, words[i], what, &id);
        int rc = one(c, id);
        if (!first)
            first = rc;
    }
    return first;
}

/* One call that acts on the server; with --json its answer is printed,
 * else *o is left for the caller to say what was done (NULL otherwise). */
static int act(struct cli *c, const char *method, const char *path, json_t **o)
{
    int rc = api_call(c, method, path, NULL, 0, o);
    if (!rc && c->json) {
        rc = print_json(c, *o);
        json_decref(*o);
        *o = NULL;
    }
    return rc;
}

/* DELETE /v1/workers/ID; the exit code (the server's refusal printed). */
static int remove_worker(struct cli *c, long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/workers/%ld", id);
    json_t *o;
    int rc = act(c, "DELETE", path, &o);
    if (o)
        printf("worker %ld removed\n", id);
    json_decref(o);
    return rc;
}

/* Removes every worker the listing shows offline or lost that holds no run. */
static int prune_workers(struct cli *c)
{
    json_t *list, *w;
    size_t i;
    int rc = api_call(c, "GET", "/v1/workers", NULL, 0, &list), first = EXIT_OK, n = 0;
    if (rc)
        return rc;
    json_array_foreach(json_object_get(list, "workers"), i, w) {
        const char *state = jstr(w, "state");
        if ((strcmp(state, "offline") && strcmp(state, "lost")) ||
            json_array_size(json_object_get(w, "experiments")))
            continue;
        int one = remove_worker(c, (long)json_integer_value(json_object_get(w, "id")));
        n += !one;
        if (!first)
            first = one;
    }
    json_decref(list);
    if (!c->json)
        printf("%d worker%s removed\n", n, n == 1 ? "" : "s");
    return first;
}

int cmd_workers(struct cli *c, int argc, char **argv)
{
    int npos;
    const struct opt opts[] = {OPTS_COMMON(c), {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, workers_usage, 0, -1);
    if (rc != ARGS_GO)
        return rc;
    if (!npos)
        return get_and_print(c, "/v1/workers", print_workers);
    if (!strcmp(argv[0], "prune"))
        return npos == 1 ? prune_workers(c)
                         : fail(c, EXIT_USAGE, "prune takes no ids (rm ID... removes some)");
    if (strcmp(argv[0], "rm"))
        return fail(c, EXIT_USAGE, "unknown workers command \"%s\" (rm ID... or prune)", argv[0]);
    if (npos == 1)
        return fail(c, EXIT_USAGE, "rm: which workers? (rm ID...)");
    return each_id(c, argv + 1, npos - 1, "worker", remove_worker);
}

static int cancel_with(struct cli *c, long id, int chain)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/cancel%s", id, chain ? "?chain=true" : "");
    json_t *e;
    int rc = act(c, "POST", path, &e);
    const char *state = e ? jstr(e, "state") : "";
    if (e && !strcmp(state, "cancelled"))
        printf("experiment %ld cancelled\n", id);
    else if (e && !strcmp(state, "running"))
        printf("experiment %ld: cancel requested, it stops at its next heartbeat\n", id);
    else if (e)
        printf("experiment %ld had %s\n", id, state);
    size_t i;
    json_t *x;
    json_array_foreach(e ? json_object_get(e, "then") : NULL, i, x) {
        char a[64];
        printf("  then %s %s: %s\n", fmt_value(json_object_get(x, "id"), a, 64), jstr(x, "name"),
               jstr(x, "state"));
    }
    json_decref(e);
    return rc;
}

static int cancel_one(struct cli *c, long id)
{
    return cancel_with(c, id, 0);
}

static int cancel_chain(struct cli *c, long id)
{
    return cancel_with(c, id, 1);
}

int cmd_cancel(struct cli *c, int argc, char **argv)
{
    int npos, chain = 0;
    const struct opt opts[] = {OPTS_COMMON(c), {"--chain", OPT_FLAG, &chain}, {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, cancel_usage, 1, -1);
    return rc != ARGS_GO ? rc
                         : each_id(c, argv, npos, "experiment", chain ? cancel_chain : cancel_one);
}
