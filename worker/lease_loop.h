/* cod-worker's life with the server: register (retrying while the server
 * cannot be reached), long-poll for a lease, run each leased job to its end
 * (worker/job.h), and on stopping say so (offline), so that the server
 * shows the worker gone rather than idle. */
#ifndef COD_LEASE_LOOP_H
#define COD_LEASE_LOOP_H

#include "common/http_client.h"
#include "worker/job.h"

struct lease_loop {
    const char *name, *device;
    const char *host;     /* told to the server: a gang is packed onto the fewest hosts */
    double wait;          /* seconds of one long-poll */
    long max_jobs;        /* 0: until *ctx->stop */
};

/* Runs until *ctx->stop or max_jobs jobs. 0, or 1 when the server refused
 * this worker (registration or a lease: said in the run log). */
int lease_loop_run(const struct lease_loop *l, struct job_ctx *ctx, struct http_client *http);

#endif
