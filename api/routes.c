/* Routing: a linear table (a score of routes) matched segment by segment. */
#include "api/routes.h"

#include <string.h>

#include "api/openapi.h"
#include "api/static.h"

/* A route whose handler waits for a commit says so (the last field): it
 * runs on a write thread (writes.h). The dashboard's page and files, and
 * the API's description, need no token: they hold no data, and the page
 * asks the user for one when the API answers 401. api/openapi.json
 * describes every route here (tests/openapi.sh checks that it does). */
static const struct route routes[] = {
    {"GET", "/", h_dashboard, AUTH_NONE, "GET", 0},
    {"GET", "/static/*", h_static, AUTH_NONE, "GET", 0},
    {"GET", "/openapi.json", h_openapi, AUTH_NONE, "GET", 0},
    {"GET", "/healthz", h_healthz, AUTH_NONE, "GET", 0},
    {"GET", "/readyz", h_readyz, AUTH_CLIENT, "GET", 0},
    {"GET", "/metrics", h_prometheus, AUTH_CLIENT, "GET", 0},
    {"POST", "/v1/experiments", h_create_experiment, AUTH_CLIENT, "GET, POST", 1},
    {"GET", "/v1/experiments", h_list_experiments, AUTH_CLIENT, "GET, POST", 0},
    {"GET", "/v1/experiments/{id}", h_show_experiment, AUTH_CLIENT, "GET", 0},
    {"POST", "/v1/experiments/{id}/cancel", h_cancel, AUTH_CLIENT, "POST", 1},
    {"GET", "/v1/experiments/{id}/metrics", h_metrics, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/experiments/{id}/layers", h_layers, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/experiments/{id}/layers/history", h_layer_history, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/experiments/{id}/logs", h_logs, AUTH_CLIENT, "GET", 0},
    {"POST", "/v1/sweeps", h_create_sweep, AUTH_CLIENT, "POST", 1},
    {"GET", "/v1/sweeps/{id}", h_show_sweep, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/sweeps/{id}/series", h_sweep_series, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/sweeps/{id}/report", h_sweep_report, AUTH_CLIENT, "GET", 0},
    {"GET", "/v1/workers", h_workers, AUTH_CLIENT, "GET", 0},
    {"DELETE", "/v1/workers/{id}", h_remove_worker, AUTH_CLIENT, "DELETE", 1},
    {"POST", "/v1/workers/register", h_register, AUTH_WORKER, "POST", 1},
    {"POST", "/v1/workers/{id}/lease", h_lease, AUTH_WORKER, "POST", 0},
    {"POST", "/v1/workers/{id}/offline", h_worker_offline, AUTH_WORKER, "POST", 1},
    {"POST", "/v1/runs/{id}/heartbeat", h_heartbeat, AUTH_WORKER, "POST", 0},
    {"POST", "/v1/runs/{id}/metrics", h_report, AUTH_WORKER, "POST", 1},
    {"POST", "/v1/runs/{id}/logs", h_run_logs, AUTH_WORKER, "POST", 1},
    {"POST", "/v1/runs/{id}/finish", h_finish, AUTH_WORKER, "POST", 1},
    {"POST", "/v1/runs/{id}/rendezvous", h_rendezvous_post, AUTH_WORKER, "GET, POST", 1},
    {"GET", "/v1/runs/{id}/rendezvous", h_rendezvous_get, AUTH_WORKER, "GET, POST", 0},
};

/* Does path fit pattern? An {id} segment takes a positive decimal integer;
 * a final * takes the rest of the path, at least one character. */
static int fits(const char *pattern, const char *path, int64_t *id)
{
    while (*pattern && *path) {
        if (!strcmp(pattern, "*"))
            return 1;
        if (!strncmp(pattern, "{id}", 4)) {
            int64_t v = 0;
            int digits = 0;
            while (*path >= '0' && *path <= '9' && digits < 18) {
                v = v * 10 + (*path++ - '0');
                digits++;
            }
            if (!digits || v == 0 || (*path && *path != '/'))
                return 0;
            *id = v;
            pattern += 4;
            continue;
        }
        if (*pattern++ != *path++)
            return 0;
    }
    return !*pattern && !*path;
}

const struct route *route_match(const char *method, const char *path, int64_t *id,
                                int *path_known, const struct route **pattern)
{
    *path_known = 0;
    *pattern = NULL;
    *id = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!fits(routes[i].pattern, path, id))
            continue;
        *path_known = 1;
        *pattern = &routes[i];
        /* HEAD is GET without the body, which libmicrohttpd leaves out itself */
        if (!strcmp(routes[i].method, method) ||
            (!strcmp(method, "HEAD") && !strcmp(routes[i].method, "GET")))
            return &routes[i];
    }
    return NULL;
}

int route_print(FILE *f)
{
    static const char *const auth[] = {"none", "client", "worker"};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (fprintf(f, "%s %s %s\n", routes[i].method, routes[i].pattern, auth[routes[i].auth]) < 0)
            return -1;
    return fflush(f) == 0 ? 0 : -1;
}
