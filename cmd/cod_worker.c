/* cod-worker: pulls experiments from cod-server and trains them in-process,
 * one at a time, on its device. SIGTERM/SIGINT stop the running job at a
 * checkpoint and give its lease back; a second signal stops sending too
 * (unsent reports stay on disk for whoever resumes the experiment). Here:
 * the settings (worker/worker_args.h), the signals, the device; the work is
 * worker/lease_loop.h. */
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/device_name.h"
#include "common/fileio.h"
#include "common/http_client.h"
#include "common/path.h"
#include "kernels/ops.h"
#include "worker/device.h"
#include "worker/lease_loop.h"
#include "worker/runlog.h"
#include "worker/worker_args.h"

static volatile sig_atomic_t stop, stop_now;

static void on_signal(int sig)
{
    (void)sig;
    if (stop)
        stop_now = 1;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct worker_args a;
    int usage = worker_args_parse(argc, argv, &a);
    if (usage)
        return usage == 1 ? 0 : 2;
    char err[1024], host[256] = "worker", defname[320];
    const struct ops *ops;
    struct device_name dn;
    if (device_backend(a.device, &ops, err, sizeof err) != 0 ||
        (device_parse(a.device, &dn) == 0 && dn.kind == DEVICE_ANY)) {
        fprintf(stderr, "cod-worker: %s\n", ops ? "--device any: name the device, cpu or cuda:N" : err);
        return 2;
    }
    if (a.nccl_always && dn.kind != DEVICE_CUDA) {
        fprintf(stderr, "cod-worker: --nccl always needs a cuda:N device (NCCL joins GPUs)\n");
        return 2;
    }
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "worker");
    if (!a.host)
        a.host = host;
    if (!a.name) {
        if (path_fmt(defname, sizeof defname, err, sizeof err, "%s/%s/%d", host, a.device,
                     (int)getpid()) != 0) {
            fprintf(stderr, "cod-worker: --name: %s\n", err);
            return 2;
        }
        a.name = defname;
    }
    if (fio_mkdir_p(a.work_dir, err, sizeof err) != 0) {
        fprintf(stderr, "cod-worker: --work-dir: %s\n", err);
        return 2;
    }
    if (a.threads > 0)
        omp_set_num_threads(a.threads);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct http_client *http = NULL;
    if (http_global_init(err, sizeof err) != 0 ||
        !(http = http_client_new(a.server, a.token, err, sizeof err))) {
        fprintf(stderr, "cod-worker: %s\n", err);
        return 1;
    }
    struct job_ctx ctx = {.server = a.server, .token = a.token, .work_dir = a.work_dir,
                          .ops = ops, .heartbeat_s = a.heartbeat_s, .flush_s = a.flush_s,
                          .nccl_always = a.nccl_always,
                          .stop = &stop, .stop_now = &stop_now};
    struct lease_loop loop = {.name = a.name, .device = a.device, .host = a.host, .wait = a.wait,
                              .max_jobs = a.max_jobs};
    runlog_printf("cod-worker on %s, %d threads, work dir %s, server %s", a.device,
                  omp_get_max_threads(), a.work_dir, a.server);
    int rc = lease_loop_run(&loop, &ctx, http);
    http_client_free(http);
    return rc;
}
