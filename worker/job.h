/* One leased job, from lease to finish: the experiment's directory under
 * the work dir (resumed from its newest checkpoint when it has one), the
 * trainer in this thread, the reporter beside it, and the outcome told to
 * the server: succeeded, failed with the reason, released when the worker is
 * stopping, nothing when the lease was lost or the experiment cancelled. */
#ifndef COD_JOB_H
#define COD_JOB_H

#include <jansson.h>
#include <signal.h>

#include "common/http_client.h"
#include "kernels/ops.h"

struct job_ctx {
    const char *server, *token, *work_dir;
    const struct ops *ops;
    double heartbeat_s, flush_s;
    int nccl_always;                 /* a run of one rank goes through NCCL too */
    volatile sig_atomic_t *stop;     /* stop at a checkpoint and give the lease back */
    volatile sig_atomic_t *stop_now; /* stop sending too: what is unsent stays on disk */
};

/* Runs the job of a lease answer ({"run", "experiment", "attempt",
 * "lease_seconds", "spec", "rank", "world_size"}) on http (the worker's own
 * connection). Returns the outcome: "succeeded", "failed" or "released"
 * (told to the server), "cancelled" (the server said so), "lost" (the lease
 * is gone), or "abandoned" (a second signal: nothing told, the lease will
 * lapse). In a gang (gang.h) rank 0 tells what became of the experiment;
 * another rank tells only its own failure, and only when rank 0 has not
 * ended the run within a lease. */
const char *job_run(const struct job_ctx *ctx, struct http_client *http, json_t *lease);

#endif
