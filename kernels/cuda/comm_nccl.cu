/* The NCCL communicator: see comm_nccl.h. The communicator is
 * non-blocking (NCCL's config.blocking = 0), so that no call can wait
 * forever on a rank that is gone: each call is followed by polling NCCL's
 * state (settle), and each wait for the stream by polling it, both checking
 * the abort callback between polls. */
#include <cstdio>
#include <cstring>
#include <new>
#include <unistd.h>

#include <nccl.h>

#include "kernels/cuda/comm_nccl.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define NCCL_SONAME "libnccl.so." STR(NCCL_MAJOR)

static struct {
    void *lib;
    decltype(&ncclGetUniqueId) GetUniqueId;
    decltype(&ncclCommInitRankConfig) CommInitRankConfig;
    decltype(&ncclCommGetAsyncError) CommGetAsyncError;
    decltype(&ncclAllReduce) AllReduce;
    decltype(&ncclBroadcast) Broadcast;
    decltype(&ncclCommDestroy) CommDestroy;
    decltype(&ncclCommAbort) CommAbort;
    decltype(&ncclGetErrorString) GetErrorString;
} nc;

static int load_nccl(char *err, size_t errlen)
{
    if (nc.lib)
        return 0;
    const struct cuda_symbol syms[] = {
        {(void **)&nc.GetUniqueId, "ncclGetUniqueId"},
        {(void **)&nc.CommInitRankConfig, "ncclCommInitRankConfig"},
        {(void **)&nc.CommGetAsyncError, "ncclCommGetAsyncError"},
        {(void **)&nc.AllReduce, "ncclAllReduce"},
        {(void **)&nc.Broadcast, "ncclBroadcast"},
        {(void **)&nc.CommDestroy, "ncclCommDestroy"},
        {(void **)&nc.CommAbort, "ncclCommAbort"},
        {(void **)&nc.GetErrorString, "ncclGetErrorString"},
    };
    nc.lib = cuda_open_library(NCCL_SONAME, "NCCL, for a gang of GPUs", syms,
                               sizeof syms / sizeof syms[0], err, errlen);
    return nc.lib ? 0 : -1;
}

struct nccl_comm {
    struct comm c;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t compute_done;
    double *scratch; /* allreduce_host's values on the device */
    int (*abort)(void *ctx);
    void *abort_ctx;
    int failed;
    char first_error[384];
};

static struct nccl_comm *self(struct comm *c) { return (struct nccl_comm *)c->ctx; }

static void fail(struct nccl_comm *n, const char *op, const char *what)
{
    if (!n->failed++) {
        snprintf(n->first_error, sizeof n->first_error, "nccl %s (rank %d of %d): %s", op,
                 n->c.rank, n->c.size, what);
        fprintf(stderr, "cuda: %s\n", n->first_error);
    }
}

static int aborted(struct nccl_comm *n, const char *op)
{
    if (!n->abort || !n->abort(n->abort_ctx))
        return 0;
    nc.CommAbort(n->comm);
    fail(n, op, "given up: the run ended while this rank waited for its peers");
    return 1;
}

/* Until NCCL has finished starting the last call (non-blocking mode). */
static int settle(struct nccl_comm *n, ncclResult_t r, const char *op)
{
    while (r == ncclInProgress) {
        if (aborted(n, op))
            return -1;
        usleep(100);
        if (nc.CommGetAsyncError(n->comm, &r) != ncclSuccess)
            r = ncclSystemError;
    }
    if (r != ncclSuccess) {
        fail(n, op, nc.GetErrorString(r));
        return -1;
    }
    return 0;
}

/* Until the communicator's stream is idle, checking NCCL and the abort. */
static int drain(struct nccl_comm *n, const char *op)
{
    for (;;) {
        cudaError_t e = cudaStreamQuery(n->stream);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady) {
            fail(n, op, cudaGetErrorString(e));
            return -1;
        }
        ncclResult_t r;
        if (nc.CommGetAsyncError(n->comm, &r) != ncclSuccess || (r != ncclSuccess &&
                                                                 r != ncclInProgress)) {
            fail(n, op, nc.GetErrorString(r));
            return -1;
        }
        if (aborted(n, op))
            return -1;
        usleep(50);
    }
}

/* The communicator's stream starts after what the default stream holds. */
static int follow_compute(struct nccl_comm *n, const char *op)
{
    cudaError_t e = cudaEventRecord(n->compute_done, 0);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(n->stream, n->compute_done, 0);
    if (e != cudaSuccess)
        fail(n, op, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : -1;
}

static void nccl_allreduce(struct comm *c, real *buf, size_t count)
{
    struct nccl_comm *n = self(c);
    if (n->failed || follow_compute(n, "allreduce"))
        return;
    settle(n, nc.AllReduce(buf, buf, count, ncclFloat32, ncclSum, n->comm, n->stream),
           "allreduce");
}

static void nccl_wait(struct comm *c)
{
    struct nccl_comm *n = self(c);
    if (!n->failed)
        drain(n, "wait");
}

static void nccl_allreduce_host(struct comm *c, double *v, int count)
{
    struct nccl_comm *n = self(c);
    if (n->failed)
        return;
    cudaError_t e = cudaMemcpy(n->scratch, v, (size_t)count * sizeof(double),
                               cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        fail(n, "allreduce (host values)", cudaGetErrorString(e));
        return;
    }
    if (follow_compute(n, "allreduce (host values)") ||
        settle(n, nc.AllReduce(n->scratch, n->scratch, (size_t)count, ncclFloat64, ncclSum,
                               n->comm, n->stream),
               "allreduce (host values)") ||
        drain(n, "allreduce (host values)"))
        return;
    e = cudaMemcpy(v, n->scratch, (size_t)count * sizeof(double), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess)
        fail(n, "allreduce (host values)", cudaGetErrorString(e));
}

static void nccl_broadcast(struct comm *c, real *buf, size_t count, int root)
{
    struct nccl_comm *n = self(c);
    if (n->failed || follow_compute(n, "broadcast") ||
        settle(n, nc.Broadcast(buf, buf, count, ncclFloat32, root, n->comm, n->stream),
               "broadcast"))
        return;
    drain(n, "broadcast");
}

static int nccl_error(struct comm *c, char *err, size_t errlen)
{
    struct nccl_comm *n = self(c);
    if (!n->failed)
        return 0;
    snprintf(err, errlen, "%s", n->first_error);
    return -1;
}

extern "C" int comm_nccl_unique_id(unsigned char id[COMM_NCCL_ID_BYTES], char *err, size_t errlen)
{
    if (load_nccl(err, errlen) != 0)
        return -1;
    ncclUniqueId u;
    ncclResult_t r = nc.GetUniqueId(&u);
    if (r != ncclSuccess) {
        snprintf(err, errlen, "ncclGetUniqueId: %s", nc.GetErrorString(r));
        return -1;
    }
    static_assert(sizeof u.internal == COMM_NCCL_ID_BYTES, "NCCL's unique id size");
    memcpy(id, u.internal, COMM_NCCL_ID_BYTES);
    return 0;
}

extern "C" struct comm *comm_nccl_create(const unsigned char id[COMM_NCCL_ID_BYTES], int rank,
                                         int size, int (*abort)(void *ctx), void *abort_ctx,
                                         char *err, size_t errlen)
{
    if (load_nccl(err, errlen) != 0)
        return NULL;
    struct nccl_comm *n = new (std::nothrow) nccl_comm();
    if (!n) {
        snprintf(err, errlen, "out of host memory for the communicator");
        return NULL;
    }
    n->c = {"nccl", rank, size, n, nccl_allreduce, nccl_allreduce_host, nccl_broadcast,
            nccl_wait, nccl_error};
    n->abort = abort;
    n->abort_ctx = abort_ctx;
    cudaError_t e = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&n->compute_done, cudaEventDisableTiming);
    n->scratch = (double *)cuda_malloc_tracked(64 * sizeof(double), "nccl");
    if (e != cudaSuccess || !n->scratch) {
        snprintf(err, errlen, "the communicator's stream or memory: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "out of device memory");
        comm_nccl_destroy(&n->c);
        return NULL;
    }
    ncclUniqueId u;
    memcpy(u.internal, id, COMM_NCCL_ID_BYTES);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = nc.CommInitRankConfig(&n->comm, size, u, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        snprintf(err, errlen, "ncclCommInitRank (rank %d of %d): %s", rank, size,
                 nc.GetErrorString(r));
        n->comm = NULL;
        comm_nccl_destroy(&n->c);
        return NULL;
    }
    if (settle(n, r, "join") != 0) {
        snprintf(err, errlen, "%s", n->first_error);
        comm_nccl_destroy(&n->c);
        return NULL;
    }
    return &n->c;
}

extern "C" void comm_nccl_destroy(struct comm *c)
{
    if (!c)
        return;
    struct nccl_comm *n = self(c);
    if (n->comm) {
        if (n->failed)
            nc.CommAbort(n->comm);
        else
            nc.CommDestroy(n->comm);
    }
    if (n->compute_done)
        cudaEventDestroy(n->compute_done);
    if (n->stream)
        cudaStreamDestroy(n->stream);
    cuda_free_tracked(n->scratch);
    delete n;
}
