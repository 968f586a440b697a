/* Recording a micro-batch as a CUDA graph (ops.h: record_begin ...
 * recording_free). A training micro-batch is hundreds of launches; at small
 * widths each kernel runs for a few microseconds, about what launching it
 * costs the host, so the GPU waits on the CPU. Replayed as one graph, the
 * launches cost the host once. The backend's work goes to the per-thread
 * default stream (the build's --default-stream per-thread), which, unlike
 * the legacy default stream, can be captured.
 *
 * While capturing, a failed CUDA call means the step cannot be recorded,
 * not that the GPU faulted: cuda_fail sends it here (cuda_recording_fail)
 * and record_end reports it, the trainer then runs op by op. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

struct recording {
    cudaGraphExec_t exec;
    unsigned long scratch_generation; /* cuda_scratch's memory it was made with */
};

/* the capturing thread's: the capture mode is thread-local, so a failure
 * on another thread is still a fault */
static thread_local struct {
    int on;
    char why[200];
} capture;

int cuda_recording(void) { return capture.on; }

void cuda_recording_fail(const char *op, const char *what)
{
    if (!capture.why[0])
        snprintf(capture.why, sizeof capture.why, "%s: %s", op, what);
}

/* COD_CUDA_GRAPHS=0 turns recording off (another value than 0 or 1 too,
 * saying so); so do the debugging modes, whose
 * work between launches (a synchronisation, an event, an injected fault
 * charged to its op) a graph would not do. */
static const char *declined(void)
{
    const char *g = getenv("COD_CUDA_GRAPHS");
    if (g && strcmp(g, "0") == 0)
        return "COD_CUDA_GRAPHS=0";
    if (g && *g && strcmp(g, "1") != 0) {
        static thread_local char bad[128];
        snprintf(bad, sizeof bad, "COD_CUDA_GRAPHS must be 0 or 1 (or unset), not \"%.60s\"", g);
        return bad;
    }
    if (cuda_sync_mode())
        return "COD_CUDA_SYNC=1 synchronises after every launch";
    if (cuda_profile_mode())
        return "COD_CUDA_PROFILE=1 times every launch";
    if (getenv("COD_CUDA_INJECT_FAULT"))
        return "COD_CUDA_INJECT_FAULT charges a fault to its op";
    return NULL;
}

int cuda_record_begin(char *err, size_t errlen)
{
    const char *no = declined();
    if (!no && cuda_failed())
        no = "the GPU has already faulted";
    if (no) {
        snprintf(err, errlen, "%s", no);
        return -1;
    }
    capture.why[0] = 0;
    /* thread-local: the trainer's thread alone uses the GPU, and a call
     * that would not be replayed (an allocation) fails the capture */
    cudaError_t e = cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaStreamBeginCapture: %s", cudaGetErrorString(e));
        return -1;
    }
    capture.on = 1;
    return 0;
}

recording *cuda_record_end(char *err, size_t errlen)
{
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(cudaStreamPerThread, &graph);
    capture.on = 0;
    /* a failed capture leaves its error with the runtime: clear it, it is no fault */
    cudaGetLastError();
    recording *r = NULL;
    if (capture.why[0])
        snprintf(err, errlen, "recording the step failed at %s", capture.why);
    else if (e != cudaSuccess)
        snprintf(err, errlen, "cudaStreamEndCapture: %s", cudaGetErrorString(e));
    else if (!(r = (recording *)calloc(1, sizeof *r)))
        snprintf(err, errlen, "out of memory for a recording");
    else if ((e = cudaGraphInstantiate(&r->exec, graph, 0)) != cudaSuccess) {
        snprintf(err, errlen, "cudaGraphInstantiate: %s", cudaGetErrorString(e));
        cudaGetLastError();
        free(r);
        r = NULL;
    } else {
        /* scratch cannot have moved since the capture began: cuda_scratch
         * refuses to grow while one is on, failing it */
        r->scratch_generation = cuda_scratch_generation();
    }
    if (graph && cudaGraphDestroy(graph) != cudaSuccess)
        cudaGetLastError();
    if (!r)
        fprintf(stderr, "cuda: not recording the step: %s\n", err);
    return r;
}

int cuda_replay(recording *r)
{
    if (r->scratch_generation != cuda_scratch_generation())
        return -1;
    CUDA_CHECK("replay (the step's CUDA graph)", cudaGraphLaunch(r->exec, cudaStreamPerThread));
    return 0;
}

void cuda_recording_free(recording *r)
{
    if (!r)
        return;
    CUDA_CHECK("recording_free", cudaGraphExecDestroy(r->exec));
    free(r);
}
