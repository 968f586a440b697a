/* The part of the CUDA runtime API the backend calls, emulated: one device
 * whose memory is host memory (allocated from the host's heap, so that
 * AddressSanitizer sees a kernel read or write past an allocation), work
 * done at once in the order it is issued, and the stream capture of CUDA
 * graphs, which records that work to replay it. The rules a real device
 * enforces are enforced here, each failure answered as the runtime answers
 * it (streams of their own and events: streams.cc): launch limits, the shared memory a kernel may use unless allowed
 * more, copies whose direction does not match their pointers, calls a
 * thread-local capture forbids (they fail it), a fault that leaves every
 * later call failing. */
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include <cuda_profiler_api.h>

#include "kernels/cuda/emu/internal.h"

struct CUgraph_st {
    std::vector<emu::Work> work;
};
struct CUgraphExec_st {
    std::vector<emu::Work> work;
};

namespace emu {
namespace {

constexpr size_t DEFAULT_MEMORY = (size_t)8 << 30;
constexpr size_t SMEM_DEFAULT = 48 << 10, SMEM_OPTIN = 232448; /* an H100's */
constexpr int SMS = 132;

struct State {
    std::map<uintptr_t, size_t> allocs; /* base → bytes */
    size_t allocated = 0, memory = 0;
    cudaError_t sticky = cudaSuccess, last = cudaSuccess;
    std::map<const void *, int> smem_allowed;
    int device = 0;
};
State &st()
{
    static State s;
    return s;
}

/* the capture of this thread: everything issued to its stream is recorded */
struct Capture {
    bool on = false, invalid = false;
    cudaStream_t stream = nullptr;
    std::vector<Work> work;
};
thread_local Capture cap;

size_t device_memory()
{
    State &s = st();
    if (!s.memory) {
        const char *v = getenv("COD_EMU_MEMORY_GIB");
        long gib = v ? strtol(v, nullptr, 10) : 0;
        s.memory = gib > 0 ? (size_t)gib << 30 : DEFAULT_MEMORY;
    }
    return s.memory;
}

cudaError_t set(cudaError_t e)
{
    if (e != cudaSuccess)
        st().last = e;
    return e;
}

/* a device fault: this and every later call fail with it */
void device_fault(cudaError_t e, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda emulator: %s\n", what);
    if (st().sticky == cudaSuccess)
        st().sticky = e;
    set(e);
}


/* the default stream of the thread (0 or cudaStreamPerThread: the build is
 * --default-stream per-thread) or a stream of its own */
bool same_stream(cudaStream_t a, cudaStream_t b)
{
    auto norm = [](cudaStream_t s) { return s == nullptr ? cudaStreamPerThread : s; };
    return norm(a) == norm(b);
}

bool captured(cudaStream_t s) { return cap.on && same_stream(s, cap.stream); }

/* the allocation holding [p, p + bytes), or allocs.end() */
std::map<uintptr_t, size_t>::iterator holder(const void *p, size_t bytes)
{
    auto &a = st().allocs;
    uintptr_t u = (uintptr_t)p;
    auto it = a.upper_bound(u);
    if (it == a.begin())
        return a.end();
    --it;
    if (u >= it->first && u + bytes <= it->first + it->second)
        return it;
    return a.end();
}

bool in_device(const void *p, size_t bytes) { return holder(p, bytes) != st().allocs.end(); }

} /* namespace */

/* a call a thread-local capture forbids fails, and so does the capture */
bool forbidden_in_capture()
{
    if (!cap.on)
        return false;
    cap.invalid = true;
    set(cudaErrorStreamCaptureUnsupported);
    return true;
}

cudaError_t sticky_error() { return st().sticky ? set(st().sticky) : cudaSuccess; }

/* run now, record while the stream is captured, or queue on a stream of
 * its own (streams.cc) */
cudaError_t issue(cudaStream_t s, Work work)
{
    if (st().sticky)
        return set(st().sticky);
    if (own_stream(s))
        return queue(s, std::move(work));
    if (captured(s)) {
        cap.work.push_back(std::move(work));
        return cudaSuccess;
    }
    std::string why;
    if (cudaError_t e = work(&why)) {
        device_fault(e, "%s", why.c_str());
        return e;
    }
    return cudaSuccess;
}

namespace {

cudaError_t run_launch(const Kernel &k, std::string *why)
{
    for (size_t i = 0; i < k.pointers.size(); i++)
        if (k.pointers[i] && !device_pointer(k.pointers[i])) {
            char what[300];
            snprintf(what, sizeof what,
                     "kernel %s: argument %zu (%p) is not in device memory (freed, or the host's)",
                     k.name, i + 1, k.pointers[i]);
            *why = what;
            return cudaErrorIllegalAddress;
        }
    if (!run_kernel(k, why)) {
        *why = std::string("kernel ") + k.name + ": " + *why;
        return cudaErrorLaunchFailure;
    }
    return cudaSuccess;
}

cudaError_t copy_checked(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    bool dd = in_device(dst, n), sd = in_device(src, n);
    bool want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice,
         want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault || kind == cudaMemcpyHostToHost)
        return cudaSuccess;
    if (n && (dd != want_dd || sd != want_sd)) {
        fprintf(stderr,
                "cuda emulator: cudaMemcpy of %zu bytes, kind %d: the %s is %s device memory\n", n,
                (int)kind, dd != want_dd ? "destination" : "source",
                (dd != want_dd ? want_dd : want_sd) ? "not in" : "in");
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

/* the errors the emulator answers with, by name and in the runtime's words */
struct ErrorText {
    cudaError_t code;
    const char *name, *words;
};
#define ERROR_TEXT(code, words) {code, #code, words}
const ErrorText ERRORS[] = {
    ERROR_TEXT(cudaSuccess, "no error"),
    ERROR_TEXT(cudaErrorInvalidValue, "invalid argument"),
    ERROR_TEXT(cudaErrorMemoryAllocation, "out of memory"),
    ERROR_TEXT(cudaErrorInvalidConfiguration, "invalid configuration argument"),
    ERROR_TEXT(cudaErrorInvalidDevice, "invalid device ordinal"),
    ERROR_TEXT(cudaErrorLaunchFailure, "unspecified launch failure"),
    ERROR_TEXT(cudaErrorIllegalAddress, "an illegal memory access was encountered"),
    ERROR_TEXT(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"),
    ERROR_TEXT(cudaErrorStreamCaptureInvalidated,
               "operation failed due to a previous error during capture"),
    ERROR_TEXT(cudaErrorStreamCaptureUnjoined,
               "capture was not joined back to the origin stream"),
    ERROR_TEXT(cudaErrorNotReady, "device not ready"),
    ERROR_TEXT(cudaErrorIllegalState, "the operation cannot be performed in the present state"),
};
#undef ERROR_TEXT

} /* namespace */

double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

bool device_pointer(const void *p) { return in_device(p, 0); }

Snapshot snapshot(const std::vector<const void *> &inside)
{
    Snapshot s;
    for (const void *p : inside) {
        if (!p)
            continue;
        auto it = holder(p, 0);
        if (it == st().allocs.end())
            continue;
        unsigned char *base = (unsigned char *)it->first;
        bool seen = false;
        for (auto &r : s.regions)
            seen = seen || r.first == base;
        if (!seen)
            s.regions.emplace_back(base, std::vector<unsigned char>(base, base + it->second));
    }
    return s;
}

void restore(const Snapshot &s)
{
    for (auto &r : s.regions)
        std::memcpy(r.first, r.second.data(), r.second.size());
}

std::string difference(const Snapshot &s)
{
    for (auto &r : s.regions)
        for (size_t i = 0; i < r.second.size(); i++)
            if (r.first[i] != r.second[i]) {
                char what[160];
                snprintf(what, sizeof what, "byte %zu of the %zu-byte allocation at %p differs", i,
                         r.second.size(), (void *)r.first);
                return what;
            }
    return "";
}

void submit(Kernel k)
{
    if (st().sticky) {
        set(st().sticky);
        return;
    }
    const dim3 g = k.cfg.grid, b = k.cfg.block;
    const unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    const char *bad = nullptr;
    cudaError_t e = cudaErrorInvalidConfiguration;
    if (threads == 0 || threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
        bad = "a block of more than 1024 threads, or of none";
    else if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
        bad = "a grid beyond the device's limits, or empty";
    else {
        auto it = st().smem_allowed.find(k.fn);
        size_t allowed = it != st().smem_allowed.end() ? (size_t)it->second : SMEM_DEFAULT;
        if (k.cfg.smem > allowed) {
            bad = k.cfg.smem > SMEM_OPTIN ? "more dynamic shared memory than the device has"
                                          : "more than 48 KiB of dynamic shared memory without "
                                            "cudaFuncAttributeMaxDynamicSharedMemorySize";
            e = cudaErrorInvalidValue;
        }
    }
    if (bad) {
        fprintf(stderr, "cuda emulator: launch of %s <<<(%u,%u,%u), (%u,%u,%u), %zu>>>: %s\n",
                k.name, g.x, g.y, g.z, b.x, b.y, b.z, k.cfg.smem, bad);
        if (cap.on)
            cap.invalid = true;
        set(e);
        return;
    }
    cudaStream_t s = k.cfg.stream;
    auto kernel = std::make_shared<Kernel>(std::move(k));
    issue(s, [kernel](std::string *why) { return run_launch(*kernel, why); });
}

} /* namespace emu */

using emu::cap;
using emu::set;
using emu::st;

/* what the fake cuBLASLt (cublaslt.cc, a library of its own) calls back */
extern "C" bool emu_device_span(const void *p, size_t bytes)
{
    return emu::in_device(p, bytes);
}

extern "C" int emu_enqueue(cudaStream_t stream, void (*run)(void *), void *ctx,
                           void (*release)(void *))
{
    std::shared_ptr<void> owned(ctx, release);
    return (int)emu::issue(stream, [run, owned](std::string *) {
        run(owned.get());
        return cudaSuccess;
    });
}

extern "C" {

const char *cudaGetErrorString(cudaError_t e)
{
    for (const emu::ErrorText &t : emu::ERRORS)
        if (t.code == e)
            return t.words;
    return "unknown error (cuda emulator)";
}

const char *cudaGetErrorName(cudaError_t e)
{
    for (const emu::ErrorText &t : emu::ERRORS)
        if (t.code == e)
            return t.name;
    return "cudaErrorUnknown";
}

/* the device as new: no memory held, no error, no capture */
cudaError_t cudaDeviceReset(void)
{
    emu::State &s = st();
    for (auto &a : s.allocs)
        free((void *)a.first);
    s.allocs.clear();
    s.allocated = 0;
    s.sticky = s.last = cudaSuccess;
    s.smem_allowed.clear();
    emu::discard_queued();
    cap = emu::Capture{};
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = st().last;
    st().last = st().sticky;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return st().last; }

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
    if (d != 0)
        return set(cudaErrorInvalidDevice);
    st().device = d;
    return st().sticky ? set(st().sticky) : cudaSuccess;
}

cudaError_t cudaGetDevice(int *d)
{
    *d = st().device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
    if (d != 0)
        return set(cudaErrorInvalidDevice);
    std::memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cod's CUDA emulator (as an H100)");
    p->totalGlobalMem = emu::device_memory();
    p->sharedMemPerBlock = emu::SMEM_DEFAULT;
    p->sharedMemPerBlockOptin = emu::SMEM_OPTIN;
    p->sharedMemPerMultiprocessor = 233472;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->multiProcessorCount = emu::SMS;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->major = 9;
    p->minor = 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr, int d)
{
    if (d != 0)
        return set(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrMultiProcessorCount:
        *v = emu::SMS;
        return cudaSuccess;
    default:
        return set(cudaErrorInvalidValue);
    }
}

cudaError_t cudaFuncSetAttribute(const void *fn, cudaFuncAttribute attr, int value)
{
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
        return cudaSuccess;
    if (value < 0 || (size_t)value > emu::SMEM_OPTIN)
        return set(cudaErrorInvalidValue);
    st().smem_allowed[fn] = value;
    return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *, int block,
                                                          size_t smem)
{
    if (block <= 0 || block > 1024)
        return set(cudaErrorInvalidValue);
    int by_threads = 2048 / block, by_smem = smem ? (int)(233472 / (smem + 1024)) : 32;
    *n = by_threads < by_smem ? by_threads : by_smem;
    if (*n > 32)
        *n = 32;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = nullptr;
    if (st().sticky)
        return set(st().sticky);
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    if (bytes > emu::device_memory() - st().allocated)
        return set(cudaErrorMemoryAllocation);
    size_t n = bytes ? (bytes + 255) / 256 * 256 : 256;
    void *m = aligned_alloc(256, n);
    if (!m)
        return set(cudaErrorMemoryAllocation);
    std::memset(m, 0xff, n); /* device memory starts as garbage: NaN here */
    st().allocs[(uintptr_t)m] = bytes;
    st().allocated += bytes;
    *p = m;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    /* as the runtime's, a free waits for the device: the streams' queues first */
    emu::drain_all();
    auto it = st().allocs.find((uintptr_t)p);
    if (it == st().allocs.end())
        return set(cudaErrorInvalidValue);
    st().allocated -= it->second;
    st().allocs.erase(it);
    free(p);
    return cudaSuccess;
}

/* Pinned host memory is host memory here: copies from it are checked and
 * run as any copy from the host. */
cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = nullptr;
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    *p = malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : set(cudaErrorMemoryAllocation);
}

cudaError_t cudaFreeHost(void *p)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *total = emu::device_memory();
    *free_bytes = *total - st().allocated;
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t s)
{
    if (cudaError_t e = emu::copy_checked(dst, src, n, kind))
        return set(e);
    return emu::issue(s, [dst, src, n](std::string *) {
        std::memmove(dst, src, n);
        return cudaSuccess;
    });
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    return cudaMemcpyAsync(dst, src, n, kind, cudaStreamPerThread);
}

cudaError_t cudaMemsetAsync(void *dst, int v, size_t n, cudaStream_t s)
{
    if (n && !emu::in_device(dst, n))
        return set(cudaErrorInvalidValue);
    return emu::issue(s, [dst, v, n](std::string *) {
        std::memset(dst, v, n);
        return cudaSuccess;
    });
}

cudaError_t cudaMemset(void *dst, int v, size_t n)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    return cudaMemsetAsync(dst, v, n, cudaStreamPerThread);
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    if (cudaError_t e = emu::drain_all())
        return e;
    return st().sticky ? set(st().sticky) : cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    if (s == nullptr || s == cudaStreamLegacy || cap.on)
        return set(cudaErrorStreamCaptureUnsupported);
    if (mode != cudaStreamCaptureModeThreadLocal) {
        fprintf(stderr, "cuda emulator: only thread-local stream capture is emulated\n");
        return set(cudaErrorInvalidValue);
    }
    cap = emu::Capture{};
    cap.on = true;
    cap.stream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    *graph = nullptr;
    if (!cap.on || !emu::same_stream(s, cap.stream))
        return set(cudaErrorIllegalState);
    bool invalid = cap.invalid, unjoined = emu::discard_queued();
    std::vector<emu::Work> work = std::move(cap.work);
    cap = emu::Capture{};
    if (unjoined) {
        fprintf(stderr, "cuda emulator: the capture ends with work on a stream of its own that "
                        "the captured stream never waited for\n");
        return set(cudaErrorStreamCaptureUnjoined);
    }
    if (invalid)
        return set(cudaErrorStreamCaptureInvalidated);
    *graph = new CUgraph_st{std::move(work)};
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long)
{
    *exec = new CUgraphExec_st{graph->work};
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    delete exec;
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    for (auto &w : exec->work)
        if (cudaError_t e = emu::issue(s, w))
            return e;
    return cudaSuccess;
}

cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

} /* extern "C" */
