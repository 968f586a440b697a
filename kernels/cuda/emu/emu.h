/* The CUDA emulator: the backend's own sources (the .cu files of
 * kernels/cuda/) built with the host's C++ compiler and run on the CPU, so
 * that what the kernels compute is checked on machines without a GPU (CI's)
 * by the same GPU checks (tests/gpu/test_*_cuda.c) against the CPU backend.
 *
 * This header is force-included before each source (-include); the build
 * (Makefile, "The CUDA emulator") first turns every launch
 * `k<<<grid, block, smem>>>(args)` into `emu::launch("k", k, grid, block,
 * smem)(args)`, a dynamic `extern __shared__` array into a pointer to the
 * block's and a static one into emu::shared's storage
 * (kernels/cuda/emu/launch.sed). The runtime and cuBLASLt that the sources
 * call are emulated too (runtime.cc, cublaslt.cc), for one device used
 * from one host thread.
 *
 * A block's threads run as fibers on that host thread (exec.cc): a thread
 * runs until it reaches a barrier or a warp-wide instruction (a shuffle,
 * ldmatrix, mma), where it waits for the others it needs. What a GPU would
 * not forgive is a fault: a barrier that not every thread reaches, lanes
 * at different warp instructions, a trap, a pointer argument outside
 * device memory, a launch beyond the device's limits. With
 * COD_EMU_RACECHECK=1 every launch runs twice: its warps in step and its
 * cp.async copies landing late, then in the opposite order with each warp
 * running ahead of the next to a barrier and the copies landing early; a
 * result that differs (a race between threads) is a fault naming the
 * kernel. Not emulated: __launch_bounds__ (a launch
 * past them runs), NCCL, cuDNN (below), timing. */
#ifndef COD_CUDA_EMU_H
#define COD_CUDA_EMU_H

#ifndef COD_CUDA_EMU
#error "kernels/cuda/emu/emu.h belongs to the emulator build (COD_CUDA_EMU)"
#endif

/* cuDNN's kernels are closed code for the GPU, which the emulator cannot
 * run: attention_cudnn.cu opens a library of this name, never there, so
 * that cuDNN is absent for the emulated programs whatever the machine
 * holds, and attention takes the path it takes on a GPU without cuDNN. */
#define COD_CUDNN_SONAME "libcudnn-none-in-the-emulator.so.9"

/* The emulator's times say nothing of a GPU's, so timing cuBLASLt's
 * candidates (matmul_tune.cu) would only slow its programs down: they take
 * the heuristic's first unless COD_CUBLASLT_TUNE=1 asks for the timing,
 * as the tests of that path do (tests/cuda_emu.sh, test_matmul_cuda). */
#define COD_CUBLASLT_TUNE_DEFAULT 0

/* launch.sed turns every __shared__ declaration into emu::shared's; one
 * it could not read stops the build here, by this name */
#define __shared__ __shared___declaration_that_launch_sed_could_not_read
#define __launch_bounds__(...)

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace emu {

/* the running thread's coordinates, set by the scheduler at each switch */
extern uint3 thread_idx, block_idx;
extern dim3 block_dim, grid_dim;

void syncthreads();
void syncwarp(unsigned mask);
[[noreturn]] void trap();
/* a shuffle: xor (src is a lane mask) or idx (src is a lane) */
uint64_t shfl(unsigned mask, uint64_t bits, int src, int width, bool xor_mode);
/* the dynamic shared memory of the running block */
void *dynamic_smem();

/* A static shared array: one storage (blocks run one at a time), filled
 * with NaN the first time each block reaches its declaration, as a GPU's
 * starts undefined for every block. Key, a lambda's type, makes each
 * declaration its own. */
extern uint64_t block_serial;
template <class T, class Key> T &shared(Key)
{
    alignas(16) static T storage;
    static uint64_t filled_for = ~(uint64_t)0;
    if (filled_for != block_serial) {
        std::memset(&storage, 0xff, sizeof storage);
        filled_for = block_serial;
    }
    return storage;
}

struct LaunchConfig {
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
};

/* One launch: the kernel's address (its identity for attributes), its
 * name, the configuration, its pointer arguments (null for one that is
 * not a pointer) and the call of one thread. */
struct Kernel {
    const void *fn;
    const char *name;
    LaunchConfig cfg;
    std::vector<const void *> pointers;
    std::function<void()> thread;
};

/* runs the launch now, or records it while the stream is being captured */
void submit(Kernel k);
/* whether p points into (or just past) a live device allocation */
bool device_pointer(const void *p);

template <class T> const void *as_pointer(const T &x)
{
    if constexpr (std::is_pointer<T>::value)
        return (const void *)x;
    else
        return nullptr;
}

template <class... P> struct Launcher {
    const char *name;
    void (*fn)(P...);
    LaunchConfig cfg;

    template <class... A> void operator()(A &&...a) const
    {
        static_assert(sizeof...(A) == sizeof...(P), "a kernel takes as many arguments as it has parameters");
        std::tuple<std::decay_t<P>...> args(std::forward<A>(a)...);
        void (*f)(P...) = fn;
        Kernel k{reinterpret_cast<const void *>(fn), name, cfg, {}, nullptr};
        std::apply([&](const auto &...x) { (k.pointers.push_back(as_pointer(x)), ...); }, args);
        k.thread = [f, args]() { std::apply(f, args); };
        submit(std::move(k));
    }
};

template <class... P>
Launcher<P...> launch(const char *name, void (*fn)(P...), dim3 grid, dim3 block, size_t smem = 0,
                      cudaStream_t stream = 0)
{
    return Launcher<P...>{name, fn, {grid, block, smem, stream}};
}

template <class T> T shuffle_as(unsigned mask, T v, int src, int width, bool xor_mode)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffle moves up to 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    bits = shfl(mask, bits, src, width, xor_mode);
    T r;
    std::memcpy(&r, &bits, sizeof r);
    return r;
}

} /* namespace emu */

/* the runtime's C++ overloads that take a kernel, which only nvcc's
 * headers declare */
template <class... P> cudaError_t cudaFuncSetAttribute(void (*fn)(P...), cudaFuncAttribute a, int v)
{
    return cudaFuncSetAttribute(reinterpret_cast<const void *>(fn), a, v);
}
template <class... P>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void (*fn)(P...), int block,
                                                          size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, reinterpret_cast<const void *>(fn),
                                                         block, smem);
}

#define threadIdx (::emu::thread_idx)
#define blockIdx (::emu::block_idx)
#define blockDim (::emu::block_dim)
#define gridDim (::emu::grid_dim)

inline void __syncthreads() { emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { emu::syncwarp(mask); }
[[noreturn]] inline void __trap() { emu::trap(); }

template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    return emu::shuffle_as(mask, v, lane_mask, width, true);
}
template <class T> T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32)
{
    return emu::shuffle_as(mask, v, src_lane, width, false);
}

/* the device's fast math, as the host computes it */
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

/* the device's min and max of two numbers of a type */
#define EMU_MINMAX(T)                                                                          \
    inline T min(T a, T b) { return b < a ? b : a; }                                           \
    inline T max(T a, T b) { return a < b ? b : a; }
EMU_MINMAX(int)
EMU_MINMAX(unsigned)
EMU_MINMAX(long)
EMU_MINMAX(unsigned long)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
#undef EMU_MINMAX

#endif
