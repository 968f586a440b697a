/* A worker's part in a gang (a run of several ranks, one GPU each): the
 * rendezvous through cod-server, where rank 0 posts the NCCL id it made and
 * the other ranks long-poll for it, then the NCCL communicator every rank
 * joins. The trainer takes the communicator (train_opts.comm); nothing else
 * of the worker knows about NCCL. */
#ifndef COD_GANG_H
#define COD_GANG_H

#include <stddef.h>

#include "common/http_client.h"
#include "kernels/comm.h"

struct gang_cfg {
    long long run;
    int rank, world;
    /* polled while waiting (for the id, for the other ranks): nonzero gives
     * up, e.g. the lease was lost or the worker must stop now */
    int (*abort)(void *ctx);
    void *abort_ctx;
};

/* Meets the other ranks of cfg->run and returns the communicator (freed
 * with gang_leave), or NULL with err. *lost is set when the run ended
 * meanwhile (the server answered 409 or 404): nothing is to be told. */
struct comm *gang_join(const struct gang_cfg *cfg, struct http_client *http, int *lost, char *err,
                       size_t errlen);
void gang_leave(struct comm *c);

#endif
