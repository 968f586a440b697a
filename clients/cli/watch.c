/* cod watch and cod logs -f: poll the server until the experiment ends.
 * Polling (not a stream) because the API has none; the interval is a flag. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clients/cli/args.h"
#include "clients/cli/format.h"
#include "clients/cli/sparkline.h"

static const char watch_usage[] =
    "usage: cod watch ID [--interval S] [--json]\n"
    "Follows an experiment until it ends: a progress bar, the training loss so\n"
    "far as a sparkline, the newest eval perplexity and an ETA, redrawn in place\n"
    "on a terminal (a line per change otherwise; --json: the experiment's JSON\n"
    "per change). Polls every S seconds (default 2).\n"
    "Exit 0 when it succeeded, 5 when it failed, 6 when it was cancelled.\n";

static const char logs_usage[] =
    "usage: cod logs ID [-f|--follow] [--after N] [--interval S] [--json]\n"
    "The worker's log lines of an experiment, after line id N (default 0).\n"
    "-f keeps polling (every S seconds, default 2) until the experiment ends.\n"
    "--json prints each line as {\"id\", \"run\", \"ts\", \"line\"}.\n";

enum { SPARK_WIDTH = 40, LOGS_PAGE = 1000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int finished(const char *state)
{
    return state && (!strcmp(state, "succeeded") || !strcmp(state, "failed") ||
                     !strcmp(state, "cancelled"));
}

struct watch {
    long id;
    double t_first; /* when the watch first saw the step it reports ETA from */
    long step_first;
    size_t points; /* loss points the server holds, to thin the next fetch */
};

/* The ETA in seconds, or -1 when there is no rate to go by yet. The rate
 * seen during this watch is preferred; before there is one, the rate since
 * the run started. */
static double eta(struct watch *w, const json_t *e)
{
    long step = (long)json_integer_value(json_object_get(e, "step"));
    long steps = (long)json_integer_value(json_object_get(e, "steps"));
    double t = now(), started = json_number_value(json_object_get(e, "started"));
    if (w->step_first < 0) {
        w->step_first = step;
        w->t_first = t;
    }
    double rate = step > w->step_first ? (step - w->step_first) / (t - w->t_first)
                  : step > 0 && started > 0 && t > started ? step / (t - started)
                                                          : 0;
    return rate > 0 ? (steps - step) / rate : -1;
}

/* One status line: id, name, state, bar, step, loss and its sparkline
 * (spark_w glyphs at most), ppl, ETA. */
static void status_line(struct watch *w, const json_t *e, const json_t *loss, int spark_w,
                        char *out, size_t n)
{
    size_t np = json_array_size(loss);
    double *v = malloc((np ? np : 1) * sizeof *v);
    char bar[3 * 24 + 1], spark[3 * SPARK_WIDTH + 1] = "", a[64], b[64], c[64], d[64], eta_text[64];
    for (size_t i = 0; v && i < np; i++) {
        const json_t *val = json_array_get(json_array_get(loss, i), 1);
        v[i] = json_is_number(val) ? json_number_value(val) : NAN;
    }
    if (v)
        sparkline(v, (int)np, spark_w, spark, sizeof spark);
    free(v);
    double frac = json_number_value(json_object_get(e, "progress"));
    progress_bar(frac, 24, bar, sizeof bar);
    const json_t *latest = json_object_get(e, "latest");
    const char *state = json_string_value(json_object_get(e, "state"));
    double left = eta(w, e);
    /* Evaluations are sparse: a perplexity from an earlier step says which. */
    const json_t *ppl = json_object_get(latest, "eval/ppl");
    json_int_t ppl_step = json_integer_value(json_object_get(ppl, "step"));
    char ppl_at[48] = "";
    if (ppl && ppl_step < json_integer_value(json_object_get(e, "step")))
        snprintf(ppl_at, sizeof ppl_at, " (at step %lld)", (long long)ppl_step);
    snprintf(out, n, "#%ld %s %s %s %5.1f%% %s/%s loss %s %s ppl %s%s%s%s", w->id,
             jstr(e, "name"), jstr(e, "state"), bar, 100 * frac,
             fmt_value(json_object_get(e, "step"), a, 64),
             fmt_value(json_object_get(e, "steps"), b, 64),
             fmt_value(json_object_get(json_object_get(latest, "train/loss"), "value"), c, 64),
             spark, fmt_value(json_object_get(ppl, "value"), d, 64), ppl_at,
             left >= 0 && !finished(state) ? " ETA " : "",
             left >= 0 && !finished(state) ? fmt_duration(left, eta_text, 64) : "");
}

/* One poll: the experiment and its loss curve, thinned to between one and
 * two points per sparkline glyph. */
static int poll_once(struct cli *c, struct watch *w, json_t **e, json_t **m)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld", w->id);
    int rc = api_call(c, "GET", path, NULL, 0, e);
    if (rc)
        return rc;
    long every = w->points > 2 * SPARK_WIDTH ? (long)(w->points / SPARK_WIDTH) : 1;
    snprintf(path, sizeof path, "/v1/experiments/%ld/metrics?name=train/loss&every=%ld", w->id,
             every);
    rc = api_call(c, "GET", path, NULL, 0, m);
    /* every k-th point: the server holds about k times as many */
    if (!rc)
        w->points = json_array_size(json_object_get(json_object_get(*m, "series"), "train/loss")) *
                    (size_t)every;
    return rc;
}

static int final_code(const json_t *e)
{
    const char *s = json_string_value(json_object_get(e, "state"));
    return !strcmp(s, "succeeded") ? EXIT_OK : !strcmp(s, "failed") ? EXIT_FAILED
                                                                    : EXIT_CANCELLED;
}

int cmd_watch(struct cli *c, int argc, char **argv)
{
    double interval = 2;
    int npos;
    const struct opt opts[] = {OPTS_COMMON(c), {"--interval", OPT_NUM, &interval}, {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, watch_usage, 1, 1);
    if (rc != ARGS_GO)
        return rc;
    struct watch w = {.step_first = -1};
    if ((rc = id_arg(c, argv[0], "experiment", &w.id)))
        return rc;
    int tty = isatty(STDOUT_FILENO);
    char line[1024], shown[1024] = "";
    for (;;) {
        json_t *e = NULL, *m = NULL;
        rc = poll_once(c, &w, &e, &m);
        const char *state = json_string_value(json_object_get(e, "state"));
        if (!rc) {
            const json_t *loss = json_object_get(json_object_get(m, "series"), "train/loss");
            int spark_w = SPARK_WIDTH;
            struct winsize ws;
            /* On a terminal the line must fit its width to be redrawn in
             * place: the sparkline gives way. */
            if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
                status_line(&w, e, loss, 0, line, sizeof line);
                spark_w = ws.ws_col - 1 - text_width(line);
                spark_w = spark_w < 0 ? 0 : spark_w > SPARK_WIDTH ? SPARK_WIDTH : spark_w;
            }
            status_line(&w, e, loss, spark_w, line, sizeof line);
            /* A terminal gets the line redrawn in place; a pipe or file a line
             * per change, so a log of the watch stays short. */
            if (c->json && strcmp(line, shown))
                rc = print_json(c, e);
            else if (tty)
                printf("\r\033[K%s", line);
            else if (strcmp(line, shown))
                printf("%s\n", line);
            fflush(stdout);
            snprintf(shown, sizeof shown, "%s", line);
        }
        if (!rc && finished(state)) {
            char a[64];
            const json_t *ppl = json_object_get(json_object_get(e, "latest"), "eval/ppl");
            if (tty && !c->json)
                putchar('\n');
            if (!c->json && !strcmp(state, "succeeded"))
                printf("experiment %ld succeeded: eval/ppl %s\n", w.id,
                       fmt_value(json_object_get(ppl, "value"), a, 64));
            else if (!c->json)
                printf("experiment %ld %s: %s\n", w.id, state,
                       fmt_value(json_object_get(e, "reason"), line, sizeof line));
            rc = final_code(e);
            json_decref(e);
            json_decref(m);
            return rc;
        }
        json_decref(e);
        json_decref(m);
        if (rc) {
            if (tty && !c->json)
                putchar('\n');
            return rc;
        }
        pause_s(interval);
    }
}

/* Prints every line after *after, page by page; moves *after on. */
static int drain_logs(struct cli *c, long id, long *after)
{
    for (;;) {
        char path[160];
        json_t *page, *l;
        size_t i;
        snprintf(path, sizeof path, "/v1/experiments/%ld/logs?after=%ld&limit=%d", id, *after,
                 LOGS_PAGE);
        int rc = api_call(c, "GET", path, NULL, 0, &page);
        if (rc)
            return rc;
        json_t *lines = json_object_get(page, "lines");
        json_array_foreach(lines, i, l) {
            const char *text = json_string_value(json_object_get(l, "line"));
            if (c->json)
                rc = rc ? rc : print_json(c, l);
            else
                printf("%s\n", text ? text_safe(text) : "");
        }
        fflush(stdout);
        size_t n = json_array_size(lines);
        *after = (long)json_integer_value(json_object_get(page, "next"));
        json_decref(page);
        if (rc || n < LOGS_PAGE)
            return rc;
    }
}

int cmd_logs(struct cli *c, int argc, char **argv)
{
    double interval = 2;
    long after = 0;
    int follow = 0, npos;
    const struct opt opts[] = {OPTS_COMMON(c),
                               {"-f", OPT_FLAG, &follow},
                               {"--follow", OPT_FLAG, &follow},
                               {"--after", OPT_LONG, &after},
                               {"--interval", OPT_NUM, &interval},
                               {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, logs_usage, 1, 1);
    if (rc != ARGS_GO)
        return rc;
    long id;
    if ((rc = id_arg(c, argv[0], "experiment", &id)))
        return rc;
    for (;;) {
        /* The state is read before the lines: lines written before the end
         * are then all drained by this round. */
        int done = !follow;
        if (follow) {
            char path[64];
            json_t *e;
            snprintf(path, sizeof path, "/v1/experiments/%ld", id);
            if ((rc = api_call(c, "GET", path, NULL, 0, &e)))
                return rc;
            done = finished(json_string_value(json_object_get(e, "state")));
            json_decref(e);
        }
        if ((rc = drain_logs(c, id, &after)) || done)
            return rc;
        pause_s(interval);
    }
}
