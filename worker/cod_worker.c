/* cod-worker: pulls experiments from cod-server and trains them in-process,
 * one at a time, on its device. SIGTERM/SIGINT stop the running job at a
 * checkpoint and give its lease back; a second signal stops sending too
 * (unsent reports stay on disk for whoever resumes the experiment). */
#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clients/http_client.h"
#include "kernels/ops.h"
#include "trainer/fileio.h"
#include "worker/backoff.h"
#include "worker/device.h"
#include "worker/job.h"
#include "worker/runlog.h"

static volatile sig_atomic_t stop, stop_now;

static void on_signal(int sig)
{
    (void)sig;
    if (stop)
        stop_now = 1;
    stop = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cod-worker [--server URL] [--device cpu|cuda:N] [--work-dir DIR] [--token W]\n"
            "                  [--threads N] [--name NAME] [--max-jobs N] [--wait S]\n"
            "                  [--heartbeat-seconds S] [--flush-seconds S]\n"
            "  --server URL     cod-server (default $COD_SERVER or http://127.0.0.1:8470)\n"
            "  --device         cpu (default) or cuda:N\n"
            "  --work-dir DIR   checkpoints and reports, DIR/experiments/<id>/ (default var/worker);\n"
            "                   workers that share it resume each other's experiments\n"
            "  --token W        the worker token (default $COD_WORKER_TOKEN, else $COD_TOKEN)\n"
            "  --max-jobs N     exit after N jobs (default: run until stopped)\n"
            "  --wait S         long-poll for work S seconds per request (default 30)\n"
            "exit status: 0 stopped by a signal or after --max-jobs, 1 fatal error, 2 bad usage\n");
}

static void sleep_interruptible(double s)
{
    for (double t = 0; t < s && !stop; t += 0.1)
        usleep(100000);
}

/* Registers, retrying while the server cannot be reached. 0, or -1 (fatal or stopped). */
static int register_worker(struct http_client *http, const char *name, const char *device,
                           long long *id, double *heartbeat_s)
{
    json_t *body = json_pack("{s:s,s:s,s:i}", "name", name, "device", device, "capacity", 1);
    double delay = 0;
    int said = 0, rc = -1;
    char err[512];
    while (body && !stop) {
        struct http_response res;
        if (http_request(http, "POST", "/v1/workers/register", body, 10, &res, err, sizeof err) ||
            res.status >= 500) {
            if (!said++)
                runlog_printf("cannot reach the server yet (%s); retrying", err);
            http_response_clear(&res);
            sleep_interruptible(backoff_next(&delay));
            continue;
        }
        if (res.status == 201) {
            *id = json_integer_value(json_object_get(res.json, "id"));
            double hb = json_number_value(json_object_get(res.json, "heartbeat_seconds"));
            if (hb > 0 && hb < *heartbeat_s)
                *heartbeat_s = hb;
            runlog_printf("registered as worker %lld (%s, %s)", *id, name, device);
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
static void say_offline(struct http_client *http, long long id)
{
    char path[96], err[512];
    snprintf(path, sizeof path, "/v1/workers/%lld/offline", id);
    struct http_response res;
    http_client_set_abort(http, (volatile const int *)&stop_now);
    if (http_request(http, "POST", path, NULL, 5, &res, err, sizeof err) == 0 &&
        res.status != 200)
        http_error_text(&res, err, sizeof err);
    if (res.status != 200)
        runlog_printf("the server was not told that this worker stops (%s): it will show it lost",
                      err);
    http_response_clear(&res);
}

int main(int argc, char **argv)
{
    const char *server = getenv("COD_SERVER"), *token = getenv("COD_WORKER_TOKEN");
    const char *device = "cpu", *work_dir = "var/worker", *name = NULL;
    if (!token)
        token = getenv("COD_TOKEN");
    if (!server)
        server = "http://127.0.0.1:8470";
    int threads = 0;
    long max_jobs = 0;
    double wait = 30, heartbeat_s = 20, flush_s = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!v || a[0] != '-' || a[1] != '-') {
            fprintf(stderr, "cod-worker: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        i++;
        char *end = NULL;
        double num = strtod(v, &end);
        int numeric = end != v && *end == '\0';
        if (!strcmp(a, "--server"))
            server = v;
        else if (!strcmp(a, "--device"))
            device = v;
        else if (!strcmp(a, "--work-dir"))
            work_dir = v;
        else if (!strcmp(a, "--token"))
            token = v;
        else if (!strcmp(a, "--name"))
            name = v;
        else if (!strcmp(a, "--threads") && numeric && num >= 1 && num <= 4096)
            threads = (int)num;
        else if (!strcmp(a, "--max-jobs") && numeric && num >= 1)
            max_jobs = (long)num;
        else if (!strcmp(a, "--wait") && numeric && num >= 0 && num <= 3600)
            wait = num;
        else if (!strcmp(a, "--heartbeat-seconds") && numeric && num > 0)
            heartbeat_s = num;
        else if (!strcmp(a, "--flush-seconds") && numeric && num > 0)
            flush_s = num;
        else {
            fprintf(stderr, "cod-worker: bad option %s %s\n", a, v);
            usage(stderr);
            return 2;
        }
    }
    char err[1024], host[256] = "worker", defname[320];
    const struct ops *ops;
    if (device_backend(device, &ops, err, sizeof err) != 0 || !strcmp(device, "any")) {
        fprintf(stderr, "cod-worker: %s\n", ops ? "--device any: name the device, cpu or cuda:N" : err);
        return 2;
    }
    if (!name) {
        gethostname(host, sizeof host - 1);
        snprintf(defname, sizeof defname, "%s/%s/%d", host, device, (int)getpid());
        name = defname;
    }
    if (fio_mkdir_p(work_dir, err, sizeof err) != 0) {
        fprintf(stderr, "cod-worker: --work-dir: %s\n", err);
        return 2;
    }
    if (threads > 0)
        omp_set_num_threads(threads);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct http_client *http = NULL;
    if (http_global_init(err, sizeof err) != 0 ||
        !(http = http_client_new(server, token, err, sizeof err))) {
        fprintf(stderr, "cod-worker: %s\n", err);
        return 1;
    }
    struct job_ctx ctx = {.server = server, .token = token, .work_dir = work_dir,
                          .ops = ops, .heartbeat_s = heartbeat_s, .flush_s = flush_s,
                          .stop = &stop, .stop_now = &stop_now};
    long long id = 0;
    long jobs = 0;
    int rc = 0, idle_said = 0, down_said = 0;
    double delay = 0;
    runlog_printf("cod-worker on %s, %d threads, work dir %s, server %s", device,
                  omp_get_max_threads(), work_dir, server);
    while (!stop && (!max_jobs || jobs < max_jobs)) {
        if (!id && register_worker(http, name, device, &id, &ctx.heartbeat_s) != 0) {
            rc = stop ? 0 : 1;
            break;
        }
        char path[96];
        snprintf(path, sizeof path, "/v1/workers/%lld/lease", id);
        json_t *body = json_pack("{s:f}", "wait", wait);
        struct http_response res;
        /* A stop signal cuts the long-poll short; the job's own calls only
         * give up on a second signal (job_run sets that). */
        http_client_set_abort(http, (volatile const int *)&stop);
        int got = body ? http_request(http, "POST", path, body, wait + 15, &res, err, sizeof err) : -1;
        json_decref(body);
        if (got != 0 || res.status >= 500) {
            if (got == 0)
                http_error_text(&res, err, sizeof err);
            http_response_clear(&res);
            if (stop)
                break;
            if (!down_said++)
                runlog_printf("server unreachable (%s); retrying", err);
            sleep_interruptible(backoff_next(&delay));
            continue;
        }
        if (down_said)
            runlog_printf("server reachable again");
        down_said = 0;
        delay = 0;
        if (res.status == 204) {
            if (!idle_said++)
                runlog_printf("waiting for work");
        } else if (res.status == 404) {
            runlog_printf("the server no longer knows worker %lld: registering again", id);
            id = 0;
        } else if (res.status == 200) {
            idle_said = 0;
            const char *outcome = job_run(&ctx, http, res.json);
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
        say_offline(http, id);
    http_client_free(http);
    return rc;
}
