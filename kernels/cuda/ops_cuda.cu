/* The ops table and the error record of check.h. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_profiler_api.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static char first_error[512];
static long n_errors;

void cuda_fail(const char *file, int line, const char *op, const char *what)
{
    if (cuda_recording()) {
        cuda_recording_fail(op, what);
        return;
    }
    if (n_errors++ == 0) {
        snprintf(first_error, sizeof first_error, "%s: %s (%s:%d)", op, what, file, line);
        fprintf(stderr, "cuda: %s\n", first_error);
    }
}

int cuda_failed(void) { return n_errors != 0; }

int cuda_sync_mode(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *v = getenv("COD_CUDA_SYNC");
        mode = v && strcmp(v, "1") == 0;
    }
    return mode;
}

/* COD_CUDA_INJECT_FAULT=OP: the first launch of OP is followed by a
 * kernel that traps, a real device fault, so that tests can show what a
 * fault does to a run (tests/gpu/fault.sh). */
static __global__ void trap_kernel(void) { __trap(); }

static void inject_fault(const char *op)
{
    static const char *target;
    static int read, done;
    if (!read) {
        target = getenv("COD_CUDA_INJECT_FAULT");
        read = 1;
    }
    if (target && !done && strcmp(target, op) == 0) {
        done = 1;
        trap_kernel<<<1, 1>>>();
    }
}

/* COD_CUDA_PROFILE=1: an event after every launch; the time between
 * consecutive events is the preceding op's, gaps included (the stream runs
 * the ops in order). ops_cuda_profile_report() adds them up by op. */
enum { PROFILE_EVENTS = 1 << 16 };
static struct {
    int on, n;
    cudaEvent_t ev[PROFILE_EVENTS];
    const char *op[PROFILE_EVENTS];
} prof = {-1, 0, {}, {}};

int cuda_profile_mode(void)
{
    if (prof.on < 0) {
        const char *v = getenv("COD_CUDA_PROFILE");
        prof.on = v && strcmp(v, "1") == 0;
    }
    return prof.on;
}

void cuda_profile_mark(const char *op)
{
    if (!cuda_profile_mode() || prof.n == PROFILE_EVENTS)
        return;
    if (cudaEventCreate(&prof.ev[prof.n]) != cudaSuccess ||
        cudaEventRecord(prof.ev[prof.n], 0) != cudaSuccess) {
        prof.on = 0;
        return;
    }
    prof.op[prof.n++] = op;
}

static void profile_drop(void)
{
    for (int i = 0; i < prof.n; i++)
        cudaEventDestroy(prof.ev[i]);
    prof.n = 0;
}

extern "C" void ops_cuda_profile_report(FILE *f)
{
    if (prof.on <= 0 || prof.n < 2 || !f) {
        profile_drop();
        return;
    }
    enum { MAX_OPS = 128 };
    const char *name[MAX_OPS];
    double ms[MAX_OPS], total = 0;
    long count[MAX_OPS];
    int k = 0;
    cudaEventSynchronize(prof.ev[prof.n - 1]);
    for (int i = 1; i < prof.n; i++) {
        float t = 0;
        if (cudaEventElapsedTime(&t, prof.ev[i - 1], prof.ev[i]) != cudaSuccess)
            continue;
        int j = 0;
        while (j < k && strcmp(name[j], prof.op[i]) != 0)
            j++;
        if (j == k) {
            if (k == MAX_OPS)
                continue;
            name[k] = prof.op[i];
            ms[k] = 0;
            count[k++] = 0;
        }
        ms[j] += t;
        count[j]++;
        total += t;
    }
    for (int a = 1; a < k; a++) /* by time, largest first */
        for (int b = a; b > 0 && ms[b] > ms[b - 1]; b--) {
            double tm = ms[b];
            ms[b] = ms[b - 1];
            ms[b - 1] = tm;
            long tc = count[b];
            count[b] = count[b - 1];
            count[b - 1] = tc;
            const char *tn = name[b];
            name[b] = name[b - 1];
            name[b - 1] = tn;
        }
    fprintf(f, "PROFILE %-28s %10s %7s %8s\n", "op", "ms", "share", "launches");
    for (int j = 0; j < k; j++)
        fprintf(f, "PROFILE %-28s %10.2f %6.1f%% %8ld\n", name[j], ms[j], 100 * ms[j] / total,
                count[j]);
    fprintf(f, "PROFILE %-28s %10.2f\n", "total", total);
    profile_drop();
}

extern "C" void ops_cuda_profile_range(int on)
{
    CUDA_CHECK("profile_range", on ? cudaProfilerStart() : cudaProfilerStop());
}

void cuda_launch_check(const char *file, int line, const char *op)
{
    inject_fault(op);
    cuda_profile_mark(op);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && cuda_sync_mode())
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        cuda_fail(file, line, op, cudaGetErrorString(e));
}

static int cuda_error(char *err, size_t errlen)
{
    if (!n_errors) {
        /* a fault inside a kernel surfaces at the next synchronisation;
         * look for one without waiting for the queue to drain */
        cudaError_t e = cudaPeekAtLastError();
        if (e != cudaSuccess)
            cuda_fail(__FILE__, __LINE__, "a kernel", cudaGetErrorString(e));
    }
    if (!n_errors)
        return 0;
    snprintf(err, errlen, "%s%s", first_error, n_errors > 1 ? " (and later errors)" : "");
    return -1;
}

/* designated, in the order of struct ops as C++ requires */
extern "C" const struct ops ops_cuda = {
    .name = "cuda",
    .act_bytes = sizeof(bf16),
    .act_is_real = 0,
    .alloc = cuda_alloc,
    .alloc_act = cuda_alloc_act,
    .alloc_i32 = cuda_alloc_i32,
    .free = cuda_free,
    .zero = cuda_zero,
    .zero_act = cuda_zero_act,
    .copy = cuda_copy,
    .copy_act = cuda_copy_act,
    .upload = cuda_upload,
    .download = cuda_download,
    .upload_act = cuda_upload_act,
    .download_act = cuda_download_act,
    .upload_i32 = cuda_upload_i32,
    .to_act = cuda_to_act,
    .error = cuda_error,
    .attention_choice = cuda_attention_choice,
    .record_begin = cuda_record_begin,
    .record_end = cuda_record_end,
    .replay = cuda_replay,
    .recording_free = cuda_recording_free,
    .wgrad_beside = cuda_wgrad_beside,
    .wgrad_mark = cuda_wgrad_mark,
    .wgrad_join = cuda_wgrad_join,
    .matmul_fwd = cuda_matmul_fwd,
    .matmul_bwd = cuda_matmul_bwd,
    .embedding_fwd = cuda_embedding_fwd,
    .embedding_bwd = cuda_embedding_bwd,
    .rmsnorm_fwd = cuda_rmsnorm_fwd,
    .rmsnorm_bwd = cuda_rmsnorm_bwd,
    .attn_state_size = cuda_attn_state_size,
    .attention_fwd = cuda_attention_fwd,
    .attention_bwd = cuda_attention_bwd,
    .swiglu_fwd = cuda_swiglu_fwd,
    .swiglu_bwd = cuda_swiglu_bwd,
    .bias_add = cuda_bias_add,
    .repeat_kv = cuda_repeat_kv,
    .axpby = cuda_axpby,
    .chscale_fwd = cuda_chscale_fwd,
    .chscale_bwd = cuda_chscale_bwd,
    .cross_entropy = cuda_cross_entropy,
    .adam = cuda_adam,
    .sum = cuda_sum,
    .sumsq = cuda_sumsq,
    .dist2 = cuda_dist2,
    .act_sum = cuda_act_sum,
    .act_sumsq = cuda_act_sumsq,
    .angular_sum = cuda_angular_sum,
};
