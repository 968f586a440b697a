/* Settings. Every setting has one name, used as a flag (--lease-seconds),
 * a config-file key (lease-seconds = 30) and an environment variable
 * (COD_LEASE_SECONDS). */
#include "daemon/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char config_usage[] =
    "usage: cod-server [--listen HOST:PORT] [--db FILE] [--token T] [--worker-token W]\n"
    "                  [--config FILE] [--port-file FILE] [--lease-seconds S]\n"
    "                  [--reap-seconds S] [--long-poll-max S] [--request-deadline S]\n"
    "                  [--max-body BYTES] [--threads N] [--write-threads N] [--readers N]\n"
    "                  [--max-sweep N] [--max-gang N] [--rendezvous-seconds S]\n"
    "                  [--lock-timeout S] [--group-commit 0|1]\n"
    "                  [--conn-limit N] [--per-ip-limit N] [--conn-timeout S]\n"
    "                  [--grace-seconds S] [--log-requests 0|1] [--header-deadline S]\n"
    "                  [--allowed-hosts NAME,...] [--data-root DIR]... [--max-data-files N]\n"
    "                  [--max-sweep-axes N] [--max-model-gib G] [--check-db] [--routes]\n"
    "Every setting also reads from the config file (name = value) and from\n"
    "COD_<NAME> in the environment (e.g. COD_TOKEN); flags win over both.\n"
    "--allowed-hosts and --data-root add up within one of the three (in the\n"
    "environment: COD_ALLOWED_HOSTS=a,b, COD_DATA_ROOT=dir1:dir2); the default\n"
    "data root is var/data. docs/api.md says what each setting guards.\n"
    "--check-db prints PRAGMA integrity_check and exits; --routes prints every\n"
    "route (method, path, the token it needs) and exits.\n";

static int parse_listen(struct config *c, const char *v, char *err, size_t errlen)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v) {
        snprintf(err, errlen, "listen: want HOST:PORT, got \"%s\"", v);
        return -1;
    }
    size_t hl = (size_t)(colon - v);
    if (v[0] == '[' && hl >= 2 && v[hl - 1] == ']') {  /* [::1]:8470 */
        v++;
        hl -= 2;
    }
    if (hl >= sizeof c->host) {
        snprintf(err, errlen, "listen: host too long");
        return -1;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535) {
        snprintf(err, errlen, "listen: bad port in \"%s\"", v);
        return -1;
    }
    memcpy(c->host, v, hl);
    c->host[hl] = 0;
    c->port = (int)port;
    return 0;
}

static int num(const char *name, const char *v, double min, double max, double *out, char *err,
               size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !(x >= min && x <= max)) {
        snprintf(err, errlen, "%s: want a number in [%g, %g], got \"%s\"", name, min, max, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int text(const char *name, const char *v, char *dst, size_t n, char *err, size_t errlen)
{
    if (strlen(v) >= n) {
        snprintf(err, errlen, "%s: too long", name);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

/* Names Host may say: comma-separated, each a host name (letters, digits,
 * '-', '.'), added to the list. */
static int add_hosts(struct config *c, const char *v, char *err, size_t errlen)
{
    if (c->hosts_layer != c->layer)
        c->allowed_hosts[0] = 0;
    c->hosts_layer = c->layer;
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("-.,", *p)) {
            snprintf(err, errlen, "allowed-hosts: \"%s\" is not a list of host names", v);
            return -1;
        }
    size_t have = strlen(c->allowed_hosts);
    if (have + 1 + strlen(v) >= sizeof c->allowed_hosts) {
        snprintf(err, errlen, "allowed-hosts: too long");
        return -1;
    }
    snprintf(c->allowed_hosts + have, sizeof c->allowed_hosts - have, "%s%s", have ? "," : "", v);
    return 0;
}

/* A directory submitted data may lie under, added to the list; in the
 * environment several, separated by ':'. */
static int add_roots(struct config *c, const char *v, int split, char *err, size_t errlen)
{
    if (c->roots_layer != c->layer)
        c->n_data_roots = 0;
    c->roots_layer = c->layer;
    while (*v) {
        size_t len = split ? strcspn(v, ":") : strlen(v);
        if (len) {
            if (c->n_data_roots == CONFIG_MAX_ROOTS || len >= sizeof c->data_roots[0]) {
                snprintf(err, errlen, "data-root: at most %d roots of %zu bytes each",
                         CONFIG_MAX_ROOTS, sizeof c->data_roots[0] - 1);
                return -1;
            }
            memcpy(c->data_roots[c->n_data_roots], v, len);
            c->data_roots[c->n_data_roots++][len] = 0;
        }
        v += len + (v[len] == ':');
    }
    return 0;
}

/* Applies one setting by name. */
static int set(struct config *c, const char *name, const char *v, char *err, size_t errlen)
{
    double x;
#define NUM(key, lo, hi, field, type)                                                       \
    if (!strcmp(name, key)) {                                                                \
        if (num(name, v, lo, hi, &x, err, errlen) != 0)                                      \
            return -1;                                                                       \
        c->field = (type)x;                                                                  \
        return 0;                                                                            \
    }
    if (!strcmp(name, "listen"))
        return parse_listen(c, v, err, errlen);
    if (!strcmp(name, "db"))
        return text(name, v, c->db, sizeof c->db, err, errlen);
    if (!strcmp(name, "token"))
        return text(name, v, c->token, sizeof c->token, err, errlen);
    if (!strcmp(name, "worker-token"))
        return text(name, v, c->worker_token, sizeof c->worker_token, err, errlen);
    if (!strcmp(name, "port-file"))
        return text(name, v, c->port_file, sizeof c->port_file, err, errlen);
    if (!strcmp(name, "allowed-hosts"))
        return add_hosts(c, v, err, errlen);
    if (!strcmp(name, "data-root"))
        return add_roots(c, v, c->layer == 2, err, errlen);
    NUM("lease-seconds", 0.1, 86400, lease_s, double)
    NUM("reap-seconds", 0.01, 3600, reap_interval_s, double)
    NUM("long-poll-max", 0, 300, long_poll_max_s, double)
    NUM("request-deadline", 0.1, 3600, request_deadline_s, double)
    NUM("grace-seconds", 0, 600, grace_s, double)
    NUM("max-body", 1024, 1 << 30, max_body, size_t)
    NUM("threads", 1, 256, threads, int)
    NUM("write-threads", 1, 1024, write_threads, int)
    NUM("readers", 1, 256, readers, int)
    NUM("max-sweep", 1, 100000, max_sweep, int)
    NUM("max-gang", 1, 4096, max_gang, int)
    NUM("rendezvous-seconds", 1, 86400, rendezvous_s, double)
    NUM("lock-timeout", 0, 3600, lock_timeout_s, double)
    NUM("conn-limit", 1, 100000, conn_limit, unsigned)
    NUM("per-ip-limit", 1, 100000, per_ip_limit, unsigned)
    NUM("conn-timeout", 1, 3600, conn_timeout_s, unsigned)
    NUM("log-requests", 0, 1, log_requests, int)
    NUM("group-commit", 0, 1, group_commit, int)
    NUM("header-deadline", 0.1, 3600, header_deadline_s, double)
    NUM("max-data-files", 1, 1000000, max_data_files, int)
    NUM("max-sweep-axes", 1, 1024, max_sweep_axes, int)
    NUM("max-model-gib", 0.001, 1e6, max_model_gib, double)
#undef NUM
    snprintf(err, errlen, "unknown setting \"%s\"", name);
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

static int load_file(struct config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--config %s: cannot open", path);
        return -1;
    }
    char line[2048], sub[1024];
    int n = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        n++;
        char *s = trim(line), *eq = strchr(s, '=');
        if (!*s || *s == '#')
            continue;
        if (!eq) {
            snprintf(err, errlen, "%s:%d: want name = value", path, n);
            rc = -1;
            break;
        }
        *eq = 0;
        if (set(c, trim(s), trim(eq + 1), sub, sizeof sub) != 0) {
            snprintf(err, errlen, "%s:%d: %s", path, n, sub);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

static const char *const names[] = {
    "listen", "db", "token", "worker-token", "port-file", "lease-seconds", "reap-seconds",
    "long-poll-max", "request-deadline", "grace-seconds", "max-body", "threads", "write-threads",
    "readers", "max-sweep", "max-gang", "rendezvous-seconds", "lock-timeout", "conn-limit",
    "per-ip-limit", "conn-timeout", "log-requests", "group-commit", "header-deadline",
    "allowed-hosts", "data-root", "max-data-files", "max-sweep-axes", "max-model-gib", NULL,
};

static int load_env(struct config *c, char *err, size_t errlen)
{
    for (const char *const *n = names; *n; n++) {
        char var[64] = "COD_";
        for (size_t i = 0; (*n)[i] && i + 5 < sizeof var; i++)
            var[4 + i] = (*n)[i] == '-' ? '_' : (char)toupper((unsigned char)(*n)[i]);
        const char *v = getenv(var);
        if (v && set(c, *n, v, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int config_load(int argc, char **argv, struct config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->host, sizeof c->host, "127.0.0.1");
    c->port = 8470;
    snprintf(c->db, sizeof c->db, "var/cod.db");
    c->lease_s = 60;
    c->reap_interval_s = 1;
    c->long_poll_max_s = 30;
    c->request_deadline_s = 60;
    c->grace_s = 10;
    c->max_body = 4u << 20;
    c->threads = 16;
    c->write_threads = 64;
    c->readers = 8;
    c->max_sweep = 256;
    c->max_gang = 8;
    c->rendezvous_s = 600;
    c->lock_timeout_s = 10;
    c->conn_limit = 1000;
    c->per_ip_limit = 256;
    c->conn_timeout_s = 30;
    c->log_requests = 1;
    c->group_commit = 1;
    /* a few seconds: a client sends its headers at once, and a kept-alive
     * connection left idle this long opens anew at its next request */
    c->header_deadline_s = 5;
    c->max_data_files = 10000;
    c->max_sweep_axes = 32;
    /* the largest GPU's memory (288 GB, a B300's or an MI355X's) and a little more */
    c->max_model_gib = 288;
    /* the config file first, wherever --config sits among the flags */
    c->layer = 1;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--config") && load_file(c, argv[i + 1], err, errlen) != 0)
            return -1;
    c->layer = 2;
    if (load_env(c, err, errlen) != 0)
        return -1;
    c->layer = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(config_usage, stdout);
            return 1;
        }
        if (!strcmp(a, "--check-db") || !strcmp(a, "--routes"))
            continue;  /* an action, read by main */
        if (strncmp(a, "--", 2) || i + 1 >= argc) {
            snprintf(err, errlen, "unexpected argument \"%s\"", a);
            return -1;
        }
        if (!strcmp(a, "--config")) {
            i++;
            continue;
        }
        if (set(c, a + 2, argv[++i], err, errlen) != 0)
            return -1;
    }
    if (c->n_data_roots == 0)
        snprintf(c->data_roots[c->n_data_roots++], sizeof c->data_roots[0], "var/data");
    return 0;
}

int config_check(const struct config *c, char *err, size_t errlen)
{
    int loopback = !strncmp(c->host, "127.", 4) || !strcmp(c->host, "::1");
    if (!loopback && !c->token[0]) {
        /* Open job submission on a reachable port is how ShadowRay happened. */
        snprintf(err, errlen,
                 "refusing to listen on %s without a token (set --token, or listen on 127.0.0.1)",
                 c->host);
        return -1;
    }
    return 0;
}
