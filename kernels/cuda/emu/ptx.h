/* The PTX instructions of kernels/cuda/ptx.cuh as the emulator runs them:
 * ldmatrix and mma.sync are warp-wide, done once every lane of the warp has
 * arrived, with the fragment layouts of the PTX ISA (exec.cc); a cp.async
 * lands only at the issuing thread's cp_async_wait_all, so a tile read
 * before its wait reads what the shared memory held before (the block's
 * shared memory starts as NaN), as it may on a GPU. In COD_EMU_RACECHECK's
 * second run copies land at once instead, as they also may: a tile
 * overwritten while other warps still read it then differs. */
#ifndef COD_CUDA_EMU_PTX_H
#define COD_CUDA_EMU_PTX_H

#include <cmath>
#include <cstdint>

#include <cuda_bf16.h>

namespace emu {
void ldmatrix_x4(uint32_t r[4], const void *row_address, bool trans);
void mma_bf16_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
void cp_async16(void *dst, const void *src, int src_bytes);
void cp_async_wait_all();
} /* namespace emu */

namespace ptx {

inline void ldsm_x4(uint32_t r[4], const __nv_bfloat16 *p) { emu::ldmatrix_x4(r, p, false); }
inline void ldsm_x4_t(uint32_t r[4], const __nv_bfloat16 *p) { emu::ldmatrix_x4(r, p, true); }
inline void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    emu::mma_bf16_16816(c, a, b0, b1);
}

/* ex2.approx.ftz: denormal inputs and results are zero */
inline float ex2(float x)
{
    if (std::fpclassify(x) == FP_SUBNORMAL)
        x = 0;
    float y = std::exp2(x);
    return std::fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
}

inline void cp_async16(void *dst, const void *src, int src_bytes) { emu::cp_async16(dst, src, src_bytes); }
inline void cp_async_wait_all() { emu::cp_async_wait_all(); }

} /* namespace ptx */

#endif
