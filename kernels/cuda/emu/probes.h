/* Small kernels that pin down what the CUDA emulator does (probes.cu), for
 * tests/gpu/test_emu.c. The semantic probes are plain CUDA: run on a GPU
 * they say what the hardware does, run on the emulator what it does, and
 * the test checks both against the PTX ISA's definitions. The fault probes
 * break a rule on purpose (a barrier some threads never reach, a race, a
 * trap, a host pointer, too much shared memory, a forbidden call while
 * capturing) and are run on the emulator only: on a GPU some would hang.
 * Each returns the CUDA error the launch ended with (0: none). */
#ifndef COD_CUDA_EMU_PROBES_H
#define COD_CUDA_EMU_PROBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when built for the emulator */
int probe_emulated(void);
/* cudaGetErrorName's */
const char *probe_error_name(int e);
/* the device's error state cleared, as after cudaDeviceReset */
int probe_reset(void);

/* D[16×8] = A[16×16]·B[16×8] + C, row-major fp32 (A and B exact in bf16),
 * by one warp's mma.sync with fragments built by the PTX ISA's layouts */
int probe_mma(const float *a, const float *b, const float *c, float *d);
/* four 8×8 matrices of b16 (m[256], matrix i at m + 64i, row-major) by
 * ldmatrix.x4 and .x4.trans: out[lane·8 + reg] plain, out[lane·8 + 4 + reg]
 * transposed */
int probe_ldmatrix(const uint16_t *m, uint32_t *out);
/* out[w][lane], w over: xor 1, xor 16, xor 3 at width 8, idx 5, idx 3 at
 * width 16, each of lane·10 + 7 */
int probe_shuffle(int32_t *out);
/* 16-byte cp.async copies of src reading 16, 8 and 0 bytes into zeroed
 * shared memory, written back to out[48] (bytes) */
int probe_cp_async(const uint8_t *src, uint8_t *out);

/* the fault probes */
int probe_deadlock(void);         /* lane 0 at __syncthreads, the rest at a shuffle */
int probe_race(float *out);       /* each thread reads its neighbour's write, unsynchronised */
int probe_unwaited_copy(uint16_t *out); /* a cp.async read before its wait */
int probe_copy_over_read(void); /* a cp.async over a tile other threads still read */
int probe_warp_ahead(void); /* warps reading each other's writes past a shuffle, not a barrier */
int probe_trap(void);
int probe_host_pointer(void);
/* a launch asking for 64 KiB of dynamic shared memory: without (0) or
 * with (1) cudaFuncAttributeMaxDynamicSharedMemorySize */
int probe_big_smem(int allowed);
/* a capture of three launches, replayed twice: out = 6 */
int probe_graph(int *out);
/* a capture with cudaMalloc inside it: its error, then EndCapture's */
int probe_capture_malloc(int *end_capture_error);

#ifdef __cplusplus
}
#endif

#endif
