/* Device memory: allocation (counted, for the benchmark's peak), copies
 * and the conversions between the host's fp32 and the device's bf16, and
 * the scratch that reductions keep their partial sums in. Running out of
 * memory is not a fault of the backend but a NULL for the caller, who
 * knows the model and batch behind the request and says so. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

/* the devices of one process that the per-device tables below hold */
enum { MAX_DEVICES = 16 };

static struct {
    pthread_mutex_t lock;
    struct block {
        void *p;
        size_t bytes;
    } *blocks;
    size_t n, cap, now, peak;
} mem = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0};

void *cuda_malloc_tracked(size_t bytes, const char *op)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: clear it so later checks do not see it */
        return NULL;
    }
    CUDA_CHECK(op, e);
    if (e != cudaSuccess)
        return NULL;
    pthread_mutex_lock(&mem.lock);
    if (mem.n == mem.cap) {
        size_t cap = mem.cap ? 2 * mem.cap : 256;
        void *grown = realloc(mem.blocks, cap * sizeof(*mem.blocks));
        if (!grown) {
            pthread_mutex_unlock(&mem.lock);
            cudaFree(p);
            return NULL;
        }
        mem.blocks = (decltype(mem.blocks))grown;
        mem.cap = cap;
    }
    mem.blocks[mem.n++] = {p, bytes};
    mem.now += bytes;
    if (mem.now > mem.peak)
        mem.peak = mem.now;
    pthread_mutex_unlock(&mem.lock);
    return p;
}

void cuda_free_tracked(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&mem.lock);
    for (size_t i = 0; i < mem.n; i++)
        if (mem.blocks[i].p == p) {
            mem.now -= mem.blocks[i].bytes;
            mem.blocks[i] = mem.blocks[--mem.n];
            break;
        }
    pthread_mutex_unlock(&mem.lock);
    CUDA_CHECK("free", cudaFree(p));
}

extern "C" void ops_cuda_memory(size_t *now, size_t *peak)
{
    pthread_mutex_lock(&mem.lock);
    *now = mem.now;
    *peak = mem.peak;
    pthread_mutex_unlock(&mem.lock);
}

extern "C" void ops_cuda_reset_peak(void)
{
    pthread_mutex_lock(&mem.lock);
    mem.peak = mem.now;
    pthread_mutex_unlock(&mem.lock);
}

static void *device_zeroed(size_t bytes)
{
    void *p = cuda_malloc_tracked(bytes, "alloc");
    if (p)
        CUDA_CHECK("alloc", cudaMemset(p, 0, bytes ? bytes : 16));
    return p;
}

real *cuda_alloc(size_t n) { return (real *)device_zeroed(n * sizeof(real)); }
act *cuda_alloc_act(size_t n) { return (act *)device_zeroed(n * sizeof(bf16)); }
int32_t *cuda_alloc_i32(size_t n) { return (int32_t *)device_zeroed(n * sizeof(int32_t)); }
void cuda_free(void *p) { cuda_free_tracked(p); }

void cuda_zero(real *p, size_t n) { CUDA_CHECK("zero", cudaMemsetAsync(p, 0, n * sizeof(real))); }
void cuda_zero_act(act *p, size_t n)
{
    CUDA_CHECK("zero_act", cudaMemsetAsync(p, 0, n * sizeof(bf16)));
}

void cuda_copy(real *dst, const real *src, size_t n)
{
    if (dst != src)
        CUDA_CHECK("copy", cudaMemcpyAsync(dst, src, n * sizeof(real), cudaMemcpyDeviceToDevice));
}

void cuda_copy_act(act *dst, const act *src, size_t n)
{
    if (dst != src)
        CUDA_CHECK("copy_act",
                   cudaMemcpyAsync(dst, src, n * sizeof(bf16), cudaMemcpyDeviceToDevice));
}

void cuda_upload(real *dst, const real *host, size_t n)
{
    CUDA_CHECK("upload", cudaMemcpy(dst, host, n * sizeof(real), cudaMemcpyHostToDevice));
}

void cuda_download(real *host, const real *src, size_t n)
{
    CUDA_CHECK("download", cudaMemcpy(host, src, n * sizeof(real), cudaMemcpyDeviceToHost));
}

/* A micro-batch's tokens, targets and token groups go up through pinned
 * staging buffers, copied asynchronously in stream order: a synchronous
 * copy from pageable memory first waits for all the work queued before it,
 * and the GPU then sat idle while the host went through four of them
 * between micro-batches (the embedding's 0.4-0.5 ms a launch in the H200's
 * profile, its kernel 13 µs). The caller's array is free again at
 * return, as before. A slot is reused once its copy has run (its event),
 * which at these few slots is long done. */
enum { UPLOAD_SLOTS = 8 };

static struct upload_slot {
    void *p;
    size_t bytes;
    cudaEvent_t copied;
} upload_slots[MAX_DEVICES][UPLOAD_SLOTS];
static unsigned upload_next[MAX_DEVICES];

static int staged_upload(void *dst, const void *host, size_t bytes, const char *op)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MAX_DEVICES)
        return 0;
    struct upload_slot *u = &upload_slots[dev][upload_next[dev]++ % UPLOAD_SLOTS];
    if (!u->copied) {
        CUDA_CHECK(op, cudaEventCreateWithFlags(&u->copied, cudaEventDisableTiming));
        if (!u->copied)
            return 1;
    } else {
        CUDA_CHECK(op, cudaEventSynchronize(u->copied));
    }
    if (u->bytes < bytes) {
        CUDA_CHECK(op, cudaFreeHost(u->p));
        u->p = NULL;
        u->bytes = 0;
        if (cudaMallocHost(&u->p, bytes) != cudaSuccess) {
            cudaGetLastError();
            u->p = NULL;
            return 0; /* no pinned memory to spare: the synchronous copy */
        }
        u->bytes = bytes;
    }
    memcpy(u->p, host, bytes);
    CUDA_CHECK(op, cudaMemcpyAsync(dst, u->p, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread));
    CUDA_CHECK(op, cudaEventRecord(u->copied, cudaStreamPerThread));
    return 1;
}

void cuda_upload_i32(int32_t *dst, const int32_t *host, size_t n)
{
    /* a capture would take the asynchronous copy into the recording, to
     * replay stale staging later: there the synchronous copy fails it, as
     * every upload while recording did */
    if (n == 0 || cuda_recording() || !staged_upload(dst, host, n * sizeof(int32_t), "upload_i32"))
        CUDA_CHECK("upload_i32", cudaMemcpy(dst, host, n * sizeof(int32_t), cudaMemcpyHostToDevice));
}

/* bf16 ↔ fp32 on the host, a chunk at a time through a small buffer */
static const size_t CONVERT_CHUNK = (size_t)1 << 20;

static void convert(bf16 *dev, real *host, size_t n, int up, const char *op)
{
    bf16 *tmp = (bf16 *)malloc((n < CONVERT_CHUNK ? n : CONVERT_CHUNK) * sizeof(bf16) + 16);
    if (!tmp) {
        cuda_fail(__FILE__, __LINE__, op, "out of host memory");
        return;
    }
    for (size_t i0 = 0; i0 < n; i0 += CONVERT_CHUNK) {
        size_t k = n - i0 < CONVERT_CHUNK ? n - i0 : CONVERT_CHUNK;
        if (up) {
            for (size_t i = 0; i < k; i++)
                tmp[i] = __float2bfloat16_rn(host[i0 + i]);
            CUDA_CHECK(op, cudaMemcpy(dev + i0, tmp, k * sizeof(bf16), cudaMemcpyHostToDevice));
        } else {
            CUDA_CHECK(op, cudaMemcpy(tmp, dev + i0, k * sizeof(bf16), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < k; i++)
                host[i0 + i] = __bfloat162float(tmp[i]);
        }
    }
    free(tmp);
}

void cuda_upload_act(act *dst, const real *host, size_t n)
{
    convert(BF(dst), (real *)host, n, 1, "upload_act");
}

void cuda_download_act(real *host, const act *src, size_t n)
{
    convert((bf16 *)BFC(src), host, n, 0, "download_act");
}

static unsigned long scratch_generation;

unsigned long cuda_scratch_generation(void) { return scratch_generation; }

void *cuda_scratch(size_t bytes, const char *op)
{
    /* one per device; cudaFree waits for the work that may still read it */
    static struct {
        void *p;
        size_t bytes;
    } scratch[MAX_DEVICES];
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAX_DEVICES) {
        cuda_fail(__FILE__, __LINE__, op, "device index beyond the backend's table of 16");
        return NULL;
    }
    if (scratch[dev].bytes < bytes) {
        if (cuda_recording()) {
            /* a capture cannot replay an allocation: this step runs op by op */
            cuda_recording_fail(op, "scratch memory would grow while the step is recorded");
            return NULL;
        }
        scratch_generation++;
        cuda_free_tracked(scratch[dev].p);
        size_t want = bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes;
        scratch[dev].p = cuda_malloc_tracked(want, op);
        scratch[dev].bytes = scratch[dev].p ? want : 0;
        if (!scratch[dev].p) {
            char why[96];
            snprintf(why, sizeof why, "out of device memory for %zu bytes of scratch", want);
            cuda_fail(__FILE__, __LINE__, op, why);
        }
    }
    return scratch[dev].p;
}
