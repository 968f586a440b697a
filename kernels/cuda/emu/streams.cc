/* The streams a program makes (cudaStreamCreateWithFlags: the weight
 * gradients' second stream, NCCL's) and the events that order streams and
 * time them, emulated so that an ordering the program forgot shows in its
 * results: internal.h says how a stream's queue runs. A GPU may run a
 * second stream's work at any point between the waits that bound it; this
 * runs it at the last, which a read of its result before the wait (or a
 * write over its inputs) then sees undone. Its earliest point is not
 * emulated: work a second stream issues after waiting for the default
 * stream is already after everything the default stream issued. */
#include <deque>
#include <set>

#include <cuda_runtime.h>

#include "kernels/cuda/emu/internal.h"

struct CUstream_st {
    std::deque<emu::Work> queued;
    uint64_t issued = 0, done = 0; /* operations queued and run so far */
};

/* an event: when its operation ran, and where it was recorded (own stream
 * and that stream's count of issued operations; null: the default stream) */
struct CUevent_st {
    double ms;
    cudaStream_t stream;
    uint64_t at;
};

namespace emu {
namespace {

std::set<cudaStream_t> &streams()
{
    static std::set<cudaStream_t> s;
    return s;
}

/* s's queued operations up to its count `upto`, run as the default stream's */
cudaError_t drain(cudaStream_t s, uint64_t upto)
{
    while (s->done < upto && !s->queued.empty()) {
        Work w = std::move(s->queued.front());
        s->queued.pop_front();
        s->done++;
        if (cudaError_t e = issue(cudaStreamPerThread, std::move(w)))
            return e;
    }
    return cudaSuccess;
}

} /* namespace */

bool own_stream(cudaStream_t s) { return s && streams().count(s); }

cudaError_t queue(cudaStream_t s, Work work)
{
    s->queued.push_back(std::move(work));
    s->issued++;
    return cudaSuccess;
}

cudaError_t drain_all()
{
    for (cudaStream_t s : streams())
        if (cudaError_t e = drain(s, s->issued))
            return e;
    return cudaSuccess;
}

bool discard_queued()
{
    bool held = false;
    for (cudaStream_t s : streams()) {
        held = held || !s->queued.empty();
        s->done += s->queued.size();
        s->queued.clear();
    }
    return held;
}

} /* namespace emu */

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    *s = new CUstream_st{};
    emu::streams().insert(*s);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!emu::own_stream(s))
        return cudaErrorInvalidResourceHandle;
    /* as the runtime's: what it holds still runs */
    cudaError_t e = emu::drain(s, s->issued);
    emu::streams().erase(s);
    delete s;
    return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    if (emu::own_stream(s))
        if (cudaError_t e = emu::drain(s, s->issued))
            return e;
    return emu::sticky_error();
}

cudaError_t cudaStreamQuery(cudaStream_t s)
{
    if (emu::own_stream(s) && !s->queued.empty())
        return cudaErrorNotReady;
    return emu::sticky_error();
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = new CUevent_st{0, nullptr, 0};
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return cudaEventCreate(e); }

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    cudaError_t r = emu::issue(s, [e](std::string *) {
        e->ms = emu::now_ms();
        return cudaSuccess;
    });
    e->stream = emu::own_stream(s) ? s : nullptr;
    e->at = e->stream ? s->issued : 0;
    return r;
}

/* the default stream waiting on an own stream's event runs that stream's
 * queue up to it; an own stream waiting on the default stream's has
 * nothing to wait for (its queue runs later anyway) */
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned)
{
    if (e->stream && e->stream != s && emu::own_stream(e->stream))
        if (cudaError_t r = emu::drain(e->stream, e->at))
            return r;
    return emu::sticky_error();
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (emu::forbidden_in_capture())
        return cudaErrorStreamCaptureUnsupported;
    if (e->stream && emu::own_stream(e->stream))
        if (cudaError_t r = emu::drain(e->stream, e->at))
            return r;
    return emu::sticky_error();
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}

} /* extern "C" */
