/* cod-worker's lease loop: see lease_loop.h. */
#include "worker/lease_loop.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "worker/backoff.h"
#include "worker/runlog.h"

static void sleep_interruptible(double s, volatile sig_atomic_t *stop)
{
    for (double t = 0; t < s && !*stop; t += 0.1)
        usleep(100000);
}

/* Registers, retrying while the server cannot be reached. 0, or -1 (fatal or stopped). */
static int register_worker(struct http_client *http, const struct lease_loop *l, long long *id,
                           double *heartbeat_s, volatile sig_atomic_t *stop)
{
    const char *name = l->name, *device = l->device;
    json_t *body = json_pack("{s:s,s:s,s:i,s:s}", "name", name, "device", device, "capacity", 1,
                             "host", l->host);
    double delay = 0;
    int said = 0, rc = -1;
    char err[512];
    while (body && !*stop) {
        struct http_response res;
        if (http_request(http, "POST", "/v1/workers/register", body, 10, &res, err, sizeof err) ||
            res.status >= 500) {
            if (!said++)
                runlog_printf("cannot reach the server yet (%s); retrying", err);
            http_response_clear(&res);
            sleep_interruptible(backoff_next(&delay), stop);
            continue;
        }
        /* every later call of this worker's own carries the secret its
         * registration gave (an older server gives none) */
        const char *secret = json_string_value(json_object_get(res.json, "secret"));
        if (res.status == 201 &&
            http_client_set_header(http, "Cod-Worker-Secret", secret, err, sizeof err) != 0) {
            runlog_printf("%s", err);
        } else if (res.status == 201) {
            *id = json_integer_value(json_object_get(res.json, "id"));
            double hb = json_number_value(json_object_get(res.json, "heartbeat_seconds"));
            if (hb > 0 && hb < *heartbeat_s)
                *heartbeat_s = hb;
            runlog_printf("registered as worker %lld (%s, %s on host %s)", *id, name, device,
                          l->host);
            rc = 0;
        } else {
            http_error_text(&res, err, sizeof err);
            runlog_printf("registration refused: %s", err);
        }
        http_response_clear(&res);
        break;
    }
    json_decref(body);
    return rc;
}

/* Tells the server this worker stops, so that it shows offline rather than
 * idle. One try: a server that does not answer finds it lost after a lease. */
static void say_offline(struct http_client *http, long long id, volatile sig_atomic_t *stop_now)
{
    char path[96], err[512];
    snprintf(path, sizeof path, "/v1/workers/%lld/offline", id);
    struct http_response res;
    http_client_set_abort(http, (volatile const int *)stop_now);
    if (http_request(http, "POST", path, NULL, 5, &res, err, sizeof err) == 0 &&
        res.status != 200)
        http_error_text(&res, err, sizeof err);
    if (res.status != 200)
        runlog_printf("the server was not told that this worker stops (%s): it will show it lost",
                      err);
    http_response_clear(&res);
}

int lease_loop_run(const struct lease_loop *l, struct job_ctx *ctx, struct http_client *http)
{
    char err[1024];
    long long id = 0;
    long jobs = 0;
    int rc = 0, idle_said = 0, down_said = 0;
    double delay = 0;
    while (!*ctx->stop && (!l->max_jobs || jobs < l->max_jobs)) {
        if (!id && register_worker(http, l, &id, &ctx->heartbeat_s, ctx->stop) != 0) {
            rc = *ctx->stop ? 0 : 1;
            break;
        }
        char path[96];
        snprintf(path, sizeof path, "/v1/workers/%lld/lease", id);
        json_t *body = json_pack("{s:f}", "wait", l->wait);
        struct http_response res;
        /* A stop signal cuts the long-poll short; the job's own calls only
         * give up on a second signal (job_run sets that). */
        http_client_set_abort(http, (volatile const int *)ctx->stop);
        int got = body ? http_request(http, "POST", path, body, l->wait + 15, &res, err, sizeof err) : -1;
        json_decref(body);
        if (got != 0 || res.status >= 500) {
            if (got == 0)
                http_error_text(&res, err, sizeof err);
            http_response_clear(&res);
            if (*ctx->stop)
                break;
            if (!down_said++)
                runlog_printf("server unreachable (%s); retrying", err);
            sleep_interruptible(backoff_next(&delay), ctx->stop);
            continue;
        }
        if (down_said)
            runlog_printf("server reachable again");
        down_said = 0;
        delay = 0;
        if (res.status == 204) {
            if (!idle_said++)
                runlog_printf("waiting for work");
        } else if (res.status == 404 || res.status == 403) {
            /* removed, or a database restored from before it registered */
            runlog_printf("the server no longer knows worker %lld%s: registering again", id,
                          res.status == 403 ? " by its secret" : "");
            id = 0;
        } else if (res.status == 200) {
            idle_said = 0;
            const char *outcome = job_run(ctx, http, res.json);
            runlog_printf("experiment %lld: %s",
                          (long long)json_integer_value(json_object_get(res.json, "experiment")),
                          outcome);
            jobs++;
        } else {
            http_error_text(&res, err, sizeof err);
            runlog_printf("lease refused: %s", err);
            rc = 1;
            http_response_clear(&res);
            break;
        }
        http_response_clear(&res);
    }
    runlog_printf("cod-worker stopping after %ld job%s", jobs, jobs == 1 ? "" : "s");
    if (id)
        say_offline(http, id, ctx->stop_now);
    return rc;
}
