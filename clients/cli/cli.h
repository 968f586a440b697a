/* The cod CLI's shared state, exit codes and the commands' entry points.
 * Every command takes the words after its name and returns an exit code;
 * only main() turns that into the process's status. */
#ifndef COD_CLI_H
#define COD_CLI_H

#include <jansson.h>
#include <stddef.h>

#include "common/http_client.h"

/* Exit codes are API: scripts branch on them (documented in `cod help`). */
enum {
    EXIT_OK = 0,
    EXIT_REFUSED = 1,     /* the server answered with an error */
    EXIT_USAGE = 2,       /* bad command line or unreadable spec file */
    EXIT_UNREACHABLE = 3, /* no answer: refused, timed out, bad URL */
    EXIT_AUTH = 4,        /* 401: missing or wrong token */
    EXIT_FAILED = 5,      /* watch: the experiment ended failed */
    EXIT_CANCELLED = 6,   /* watch: the experiment ended cancelled */
};

struct cli {
    const char *server;
    const char *token;
    double timeout_s;
    int json;
    const char *cmd; /* for messages: "cod ls: ..." */
    const char *idempotency_key; /* submit, sweep: a retried call queues nothing new */
    struct http_client *http; /* made on first use, after the flags are read */
};

/* Prints "cod CMD: message" on stderr and returns code, so that callers can
 * write `return fail(c, EXIT_USAGE, "...")`. */
int fail(const struct cli *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One call to the server. On a 2xx answer fills *out with its JSON (owned by
 * the caller) and returns 0; an answer whose status is `quiet` also returns 0,
 * with *out NULL and nothing printed. Otherwise prints the server's error as
 * it wrote it (or why there was no answer) and returns the exit code. */
int api_call(struct cli *c, const char *method, const char *path, const json_t *body,
             long quiet, json_t **out);

/* Prints j on stdout as one compact line (for --json). */
int print_json(const struct cli *c, const json_t *j);

/* Appends "?key=value" or "&key=value" (value percent-encoded) to the path
 * in buf; a NULL value adds nothing. 0, or an exit code when it is too long. */
int query_add(const struct cli *c, char *buf, size_t n, const char *key, const char *value);

/* o's string member key, control characters escaped (format.h's
 * text_safe), or "-" when it is missing, null or empty. */
const char *jstr(const json_t *o, const char *key);

/* Reads a positive id of what ("experiment", "worker") from a word into
 * *id: 0, or EXIT_USAGE after saying it is not one. */
int id_arg(const struct cli *c, const char *word, const char *what, long *id);

int cmd_submit(struct cli *c, int argc, char **argv);
int cmd_sweep(struct cli *c, int argc, char **argv);
int cmd_ls(struct cli *c, int argc, char **argv);
int cmd_show(struct cli *c, int argc, char **argv);
int cmd_watch(struct cli *c, int argc, char **argv);
int cmd_logs(struct cli *c, int argc, char **argv);
int cmd_metrics(struct cli *c, int argc, char **argv);
int cmd_compare(struct cli *c, int argc, char **argv);
int cmd_cancel(struct cli *c, int argc, char **argv);
int cmd_workers(struct cli *c, int argc, char **argv);
int cmd_report(struct cli *c, int argc, char **argv);

#endif
