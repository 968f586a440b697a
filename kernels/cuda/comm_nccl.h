/* The NCCL communicator (kernels/comm.h) for a gang of GPUs, on one
 * machine or several. libnccl is opened with dlopen at the first use, as
 * cuBLASLt is, so programs start where it is absent and say so when a gang
 * needs it. Rank 0 makes a unique id (comm_nccl_unique_id), every rank
 * learns it (cod-server's rendezvous) and joins (comm_nccl_create). The
 * gradients' all-reduce runs on a stream of its own, overlapped with the
 * backward; waiting for it polls, so that a rank whose peer died can be
 * told to give up (the abort check) instead of hanging in NCCL. */
#ifndef COD_COMM_NCCL_H
#define COD_COMM_NCCL_H

#if defined(COD_HAVE_CUDA) || defined(__CUDACC__)

#include <stddef.h>

#include "kernels/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { COMM_NCCL_ID_BYTES = 128 };

/* 0 with a fresh id, or -1 with err (NCCL absent or failing). */
int comm_nccl_unique_id(unsigned char id[COMM_NCCL_ID_BYTES], char *err, size_t errlen);

/* Joins the communicator of `size` ranks as `rank` on the current device;
 * blocks until every rank has joined. abort (may be NULL) is polled while
 * waiting for NCCL: nonzero gives up, the communicator aborted and the
 * failure recorded. NULL with err. */
struct comm *comm_nccl_create(const unsigned char id[COMM_NCCL_ID_BYTES], int rank, int size,
                              int (*abort)(void *ctx), void *abort_ctx, char *err, size_t errlen);
void comm_nccl_destroy(struct comm *c);

#ifdef __cplusplus
}
#endif

#endif
#endif
