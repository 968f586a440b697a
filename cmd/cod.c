/* cod: the command-line client of cod-server. Finds the command word,
 * hands it the rest of the line (options before the command are read by the
 * command's own parser, so they may stand on either side) and turns its
 * result into the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/cli/cli.h"

static const char usage[] =
    "usage: cod [--server URL] [--token T] [--timeout S] [--json] COMMAND ...\n"
    "\n"
    "commands:\n"
    "  submit [SPEC.json|-] [spec flags]      queue one experiment\n"
    "  sweep [SPEC.json|-] [spec flags] --grid KEY=V1,V2 [KEY=V1,V2 ...]\n"
    "                                         queue the cartesian product\n"
    "  ls [--state S] [--norm N] [--model M] [--sweep ID] [--limit N] [--all]\n"
    "  show ID                                spec, state, progress, latest metrics\n"
    "  watch ID                               live progress, loss sparkline, ETA\n"
    "  logs ID [-f]                           the worker's log lines\n"
    "  metrics ID [--name N] [--csv|--json]   metric series (or --layers NAME)\n"
    "  compare ID... | --sweep ID             final eval perplexity (mean ± sd over seeds),\n"
    "                                         paired comparisons, per-layer out_var\n"
    "  report --sweep ID [--out DIR]          the sweep's report: HTML figures and CSV\n"
    "  cancel ID...                           cancel queued or running experiments\n"
    "  workers [rm ID... | prune]             workers, devices, heartbeats; remove gone ones\n"
    "  help [COMMAND]                         this text, or a command's\n"
    "\n"
    "COD_SERVER and COD_TOKEN set --server (default http://127.0.0.1:8470) and\n"
    "--token. --timeout bounds each request (default 30 s). --json prints the\n"
    "server's JSON, one object per line. `cod COMMAND --help` for its flags.\n"
    "\n"
    "exit codes:\n"
    "  0  done (watch: the experiment succeeded)\n"
    "  1  the server refused (its error is printed as it wrote it)\n"
    "  2  bad usage, or an unreadable spec file\n"
    "  3  the server could not be reached or did not answer in time\n"
    "  4  not authorized: no token, or a wrong one\n"
    "  5  watch: the experiment failed\n"
    "  6  watch: the experiment was cancelled\n";

static const struct {
    const char *name;
    int (*run)(struct cli *, int, char **);
} commands[] = {
    {"submit", cmd_submit},   {"sweep", cmd_sweep},     {"ls", cmd_ls},
    {"show", cmd_show},       {"watch", cmd_watch},     {"logs", cmd_logs},
    {"metrics", cmd_metrics}, {"compare", cmd_compare}, {"cancel", cmd_cancel},
    {"workers", cmd_workers}, {"report", cmd_report},
};

/* Is a the name of a global option that takes the next word as its value? */
static int takes_value(const char *a)
{
    return !strcmp(a, "--server") || !strcmp(a, "--token") || !strcmp(a, "--timeout");
}

int main(int argc, char **argv)
{
    const char *server = getenv("COD_SERVER"), *token = getenv("COD_TOKEN");
    struct cli c = {
        .server = server && *server ? server : "http://127.0.0.1:8470",
        .token = token && *token ? token : NULL,
        .timeout_s = 30,
    };
    int at = 1, help = 0;
    while (at < argc && argv[at][0] == '-') {
        help |= !strcmp(argv[at], "--help") || !strcmp(argv[at], "-h");
        at += takes_value(argv[at]) ? 2 : 1;
    }
    if (at >= argc) {
        fputs(usage, help ? stdout : stderr);
        return help ? EXIT_OK : EXIT_USAGE;
    }
    const char *name = argv[at];
    static char help_flag[] = "--help";
    if (!strcmp(name, "help")) {
        if (at + 1 >= argc) {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        /* `cod help CMD` is `cod CMD --help` */
        name = argv[at + 1];
        argv[at + 1] = help_flag;
    }
    /* The words before the command move up over it: the command sees them
     * as its own options. */
    for (int j = at; j > 1; j--)
        argv[j] = argv[j - 1];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) {
            char err[256];
            c.cmd = name;
            if (http_global_init(err, sizeof err) != 0)
                return fail(&c, EXIT_UNREACHABLE, "%s", err);
            int rc = commands[i].run(&c, argc - 2, argv + 2);
            if (c.http)
                http_client_free(c.http);
            return rc;
        }
    fprintf(stderr, "cod: unknown command \"%s\" (cod help lists them)\n", name);
    return EXIT_USAGE;
}
