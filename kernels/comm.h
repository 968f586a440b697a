/* Collective communication among the ranks of one data-parallel run,
 * beside the ops table: every rank holds the whole model, trains on its own
 * share of each global batch, and the ranks sum their gradients. Buffers
 * are the backend's memory (device memory on CUDA), except the host
 * scalars of allreduce_host. Implementations: comm_single (one rank, what
 * a run without a gang uses), kernels/cuda/comm_nccl (NCCL across GPUs and
 * machines), and the tests' in-process one. Failures are recorded and read
 * back with error(), as the ops table's are. */
#ifndef COD_COMM_H
#define COD_COMM_H

#include <stddef.h>

#include "kernels/real.h"

struct comm {
    const char *name;
    int rank, size;
    void *ctx;
    /* buf[0..n) summed over the ranks, in place; may still be running when
     * it returns (NCCL overlaps it with the backward): wait() orders it
     * before the backend's next op */
    void (*allreduce)(struct comm *c, real *buf, size_t n);
    /* the host values v[0..n) summed over the ranks; blocking */
    void (*allreduce_host)(struct comm *c, double *v, int n);
    /* root's buf[0..n) to every rank */
    void (*broadcast)(struct comm *c, real *buf, size_t n, int root);
    void (*wait)(struct comm *c);
    /* 0, or -1 with err naming the first failure */
    int (*error)(struct comm *c, char *err, size_t errlen);
};

/* One rank: every collective is the identity. */
extern struct comm comm_single;

#endif
