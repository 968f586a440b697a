/* cuDNN's attention graphs of kernels/cuda/attention_cudnn.cu, checked
 * against the real cuDNN without a GPU: for each head size the presets
 * use, at their sequence of 256, both graphs (forward and backward) are
 * built for an H100 and an A100 described to cuDNN by their properties
 * (CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, cuDNN 9.8 and later), cuDNN's
 * heuristics must offer engines for them, and one engine must compile its
 * kernels (NVRTC). Loading the kernels needs a driver: run with the
 * toolkit's stub libcuda.so.1 on the library path (tests/cuda_emu.sh does),
 * the plan fails there, which is as far as a machine without a GPU goes; a
 * graph cuDNN does not recognise as attention, or an attribute it refuses,
 * fails earlier, naming the call. On a GPU the kernels load, and the check
 * passes the same way. What the kernels compute is tests/gpu/
 * test_ops_cuda's to check, on a GPU. */
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/ops_cuda.h"
#include "tests/check.h"

/* The properties cuDNN 9.19 reads from a device description (the names its
 * error messages asked for), with an H100 SXM's and an A100 SXM's values. */
#define DEVICE(NAME, VER, SMS, SMEM_OPTIN, L2, SM_KHZ, MEM_KHZ, MEM, PCI)                        \
    "{\"deviceName\": \"" NAME "\", \"deviceVer\": " #VER ", \"multiProcessorCount\": " #SMS     \
    ", \"maxSharedMemoryPerBlockOptin\": " #SMEM_OPTIN ", \"l2CacheSize\": " #L2                 \
    ", \"smClockRateKHz\": " #SM_KHZ ", \"memClockRateKHz\": " #MEM_KHZ                          \
    ", \"totalGlobalMem\": " #MEM ", \"pciDeviceId\": " #PCI                                     \
    ", \"maxGridSize\": [2147483647, 65535, 65535], \"maxBlockSize\": [1024, 1024, 64], "        \
    "\"regsPerBlock\": 65536, \"warpSize\": 32, \"maxSharedMemoryPerBlock\": 49152, "            \
    "\"reservedSharedMemoryPerBlock\": 1024, \"maxRegistersPerSM\": 65536, \"maxCtasPerSM\": 32, " \
    "\"maxThreadsPerBlock\": 1024, \"maxThreadsPerSM\": 2048, \"isTccDriver\": 0, "              \
    "\"supportCoopLaunch\": 1, \"driverVer\": 13000, \"cudaDeviceId\": 0}"

static const struct {
    const char *name, *json;
} devices[] = {
    {"H100", DEVICE("NVIDIA H100 80GB HBM3", 900, 132, 232448, 52428800, 1980000, 2619000,
                    85031714816, 9008)},
    {"A100", DEVICE("NVIDIA A100-SXM4-80GB", 800, 108, 166912, 41943040, 1410000, 1593000,
                    85899345920, 8370)},
};

/* the presets' head sizes: llama-9m's 32, llama-35m's 48, llama-130m's 64
 * (most), llama-7b's 128; and a sequence no multiple of 128 */
static const struct {
    int B, T, nh, hd;
} shapes[] = {{2, 256, 4, 32}, {2, 256, 8, 48}, {4, 256, 12, 64}, {1, 256, 32, 128},
              {2, 200, 4, 64}};

static void graphs(void)
{
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            char why[800] = "";
            int ok = ops_cuda_cudnn_compiles(devices[d].json, shapes[i].B, shapes[i].T,
                                             shapes[i].nh, shapes[i].hd, why, sizeof why);
            printf("  %s: B %d, T %d, %d heads of %d: %s\n", devices[d].name, shapes[i].B,
                   shapes[i].T, shapes[i].nh, shapes[i].hd, ok ? "compiled" : why);
            CHECK(ok, "%s, head size %d, T %d: %s", devices[d].name, shapes[i].hd, shapes[i].T,
                  why);
        }
}

/* the releases refused: known attention bugs, or no cuDNN 9 */
static void versions(void)
{
    static const struct {
        size_t v;
        int refused;
    } cases[] = {{91000, 1}, {91001, 1}, {91400, 1}, {91002, 0}, {91401, 0}, {91900, 0},
                 {90000, 0}, {80906, 1}, {100000, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[200] = "";
        int refused = ops_cuda_cudnn_version_refused(cases[i].v, why, sizeof why) != 0;
        CHECK(refused == cases[i].refused, "version %zu %s", cases[i].v,
              refused ? why : "accepted");
        if (refused)
            printf("  %zu: %s\n", cases[i].v, why);
    }
}

int main(void)
{
    RUN(versions);
    char why[800];
    /* cuDNN itself, or its device descriptions, may be missing here (a
     * SKIP line, not a pass): a shape cod refuses first says which */
    ops_cuda_cudnn_compiles(devices[0].json, 2, 1, 4, 64, why, sizeof why);
    if (!strstr(why, "sequence length 1")) {
        printf("SKIP graphs: %s\n", why);
        CHECK_EXIT();
    }
    RUN(graphs);
    CHECK_EXIT();
}
