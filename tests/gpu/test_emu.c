/* What the CUDA emulator does, pinned down by the probes of
 * kernels/cuda/emu/probes.cu against the PTX ISA's and the runtime's
 * definitions. The semantic checks (mma.sync's fragments, ldmatrix with and
 * without .trans, shuffles at widths below 32, cp.async's zero fill, a
 * replayed graph, cudaMalloc refused while capturing) run on a GPU too
 * (tests/gpu/run.sh), where they say whether the emulator and the hardware
 * agree. The fault checks run on the emulator alone (tests/cuda_emu.sh):
 * each breaks a rule on purpose and must be a fault, not a result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/emu/probes.h"
#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "trainer/rng.h"

static struct rng R;

/* a value exact in bf16: a multiple of 1/8 up to 4 in size */
static float exact(void) { return (float)((int)(rng_uniform(&R) * 64) - 32) / 8; }

static void mma(void)
{
    float a[256], b[128], c[128], d[128];
    for (int i = 0; i < 256; i++)
        a[i] = exact();
    for (int i = 0; i < 128; i++) {
        b[i] = exact();
        c[i] = (float)(rng_uniform(&R) - 0.5);
    }
    int e = probe_mma(a, b, c, d);
    CHECK(e == 0, "probe_mma: %s", probe_error_name(e));
    int off = 0;
    for (int i = 0; i < 16 && e == 0; i++)
        for (int j = 0; j < 8; j++) {
            double ref = c[i * 8 + j], size = fabs(ref);
            for (int k = 0; k < 16; k++) {
                ref += (double)a[i * 16 + k] * b[k * 8 + j];
                size += fabs((double)a[i * 16 + k] * b[k * 8 + j]);
            }
            if (!(fabs(d[i * 8 + j] - ref) <= 1e-6 * size + 1e-30)) {
                if (off++ < 3)
                    fprintf(stderr, "  D[%d][%d] = %.9g, A·B + C = %.9g\n", i, j, d[i * 8 + j], ref);
            }
        }
    CHECK(off == 0, "%d of mma's 128 results are not A·B + C", off);
}

static void ldmatrix(void)
{
    uint16_t m[256];
    uint32_t out[256];
    for (int i = 0; i < 256; i++)
        m[i] = (uint16_t)(0x3f80 + i); /* distinct, and every one a finite bf16 */
    int e = probe_ldmatrix(m, out);
    CHECK(e == 0, "probe_ldmatrix: %s", probe_error_name(e));
    int off = 0;
    for (int l = 0; l < 32 && e == 0; l++)
        for (int i = 0; i < 4; i++) {
            const uint16_t *M = m + 64 * i;
            int r = l / 4, c = 2 * (l % 4);
            /* register i of lane l: row l/4, columns 2(l%4) and 2(l%4)+1 of
             * matrix i; transposed, column l/4, rows 2(l%4) and 2(l%4)+1 */
            uint32_t plain = (uint32_t)M[r * 8 + c] | (uint32_t)M[r * 8 + c + 1] << 16;
            uint32_t trans = (uint32_t)M[c * 8 + r] | (uint32_t)M[(c + 1) * 8 + r] << 16;
            off += out[l * 8 + i] != plain;
            off += out[l * 8 + 4 + i] != trans;
        }
    CHECK(off == 0, "%d of ldmatrix's 256 registers are not where the PTX ISA puts them", off);
}

static void shuffle(void)
{
    int32_t out[160];
    int e = probe_shuffle(out);
    CHECK(e == 0, "probe_shuffle: %s", probe_error_name(e));
    int off = 0;
    for (int l = 0; l < 32 && e == 0; l++) {
        int want[5] = {l ^ 1, l ^ 16, l ^ 3, 5, (l & ~15) + 3};
        for (int w = 0; w < 5; w++)
            off += out[w * 32 + l] != want[w] * 10 + 7;
    }
    CHECK(off == 0, "%d of 160 shuffled values came from the wrong lane", off);
}

static void cp_async(void)
{
    uint8_t src[48], out[48];
    for (int i = 0; i < 48; i++)
        src[i] = (uint8_t)(i + 1);
    int e = probe_cp_async(src, out);
    CHECK(e == 0, "probe_cp_async: %s", probe_error_name(e));
    int off = 0;
    for (int i = 0; i < 48 && e == 0; i++)
        off += out[i] != (i < 24 ? src[i] : 0);
    CHECK(off == 0, "%d of 48 bytes wrong: 16 and 8 bytes read, the rest of each 16 zeros", off);
}

static void graph(void)
{
    int x = 0, end = 0;
    int e = probe_graph(&x);
    CHECK(e == 0 && x == 6, "three captured launches replayed twice: %d (%s), 6 expected", x,
          probe_error_name(e));
    e = probe_capture_malloc(&end);
    CHECK(strcmp(probe_error_name(e), "cudaErrorStreamCaptureUnsupported") == 0 &&
              strcmp(probe_error_name(end), "cudaErrorStreamCaptureInvalidated") == 0,
          "cudaMalloc while capturing: %s, then cudaStreamEndCapture: %s", probe_error_name(e),
          probe_error_name(end));
}

/* ---- on the emulator alone ---- */

/* a fault, which leaves the device failing until reset */
static void expect_fault(int e, const char *want, const char *what)
{
    CHECK(strcmp(probe_error_name(e), want) == 0, "%s: %s, not %s", what, probe_error_name(e),
          want);
    int32_t out[160];
    CHECK(probe_shuffle(out) != 0, "after %s the device still worked", what);
    CHECK(probe_reset() == 0 && probe_shuffle(out) == 0, "a reset did not clear %s", what);
}

static void faults(void)
{
    expect_fault(probe_deadlock(), "cudaErrorLaunchFailure",
                 "lane 0 at __syncthreads, the rest at a shuffle");
    expect_fault(probe_trap(), "cudaErrorLaunchFailure", "a trap");
    expect_fault(probe_host_pointer(), "cudaErrorIllegalAddress", "a host pointer to a kernel");
    int e = probe_big_smem(0);
    CHECK(strcmp(probe_error_name(e), "cudaErrorInvalidValue") == 0,
          "64 KiB of dynamic shared memory without asking: %s", probe_error_name(e));
    e = probe_big_smem(1);
    CHECK(e == 0, "64 KiB of dynamic shared memory, asked for: %s", probe_error_name(e));
    uint16_t got[2];
    e = probe_unwaited_copy(got);
    CHECK(e == 0 && got[0] != 0x3f80 && got[1] == 0x3f80,
          "a cp.async read before its wait saw %#x, after it %#x (%s)", got[0], got[1],
          probe_error_name(e));
}

static void races(void)
{
    float out[64];
    CHECK(probe_race(out) == 0, "unchecked, a race is no fault");
    CHECK(probe_copy_over_read() == 0, "unchecked, a copy over a tile being read is no fault");
    CHECK(probe_warp_ahead() == 0, "unchecked, warps kept in step see each other's writes");
    setenv("COD_EMU_RACECHECK", "1", 1);
    expect_fault(probe_race(out), "cudaErrorLaunchFailure",
                 "threads reading each other's writes without a barrier (COD_EMU_RACECHECK=1)");
    expect_fault(probe_copy_over_read(), "cudaErrorLaunchFailure",
                 "a cp.async over a tile other threads still read (COD_EMU_RACECHECK=1)");
    expect_fault(probe_warp_ahead(), "cudaErrorLaunchFailure",
                 "a warp reading another's writes past a shuffle, with no barrier between "
                 "(COD_EMU_RACECHECK=1)");
    int32_t sh[160];
    CHECK(probe_shuffle(sh) == 0, "a kernel without a race passes the race check");
    unsetenv("COD_EMU_RACECHECK");
}

int main(void)
{
    if (gpu_start() != 0)
        return 1;
    rng_seed(&R, 20261125, 1);
    RUN(mma);
    RUN(ldmatrix);
    RUN(shuffle);
    RUN(cp_async);
    RUN(graph);
    if (probe_emulated()) {
        RUN(faults);
        RUN(races);
    }
    CHECK_EXIT();
}
