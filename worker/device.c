/* Device names to backends: see device.h. */
#include "worker/device.h"

#include <stdio.h>

#include "common/device_name.h"

#ifdef COD_HAVE_CUDA
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops_cuda.h"
#endif

int device_backend(const char *device, const struct ops **ops, char *err, size_t errlen)
{
    *ops = NULL;
    struct device_name d;
    if (device_parse(device, &d) != 0) {
        snprintf(err, errlen, "device %s: expected cpu or cuda:N", device);
        return -1;
    }
    if (d.kind != DEVICE_CUDA) {
        *ops = &ops_cpu;
        return 0;
    }
#ifdef COD_HAVE_CUDA
    char why[256];
    /* the probe also makes the device current, which is where ops_cuda runs */
    if (cuda_probe(d.index < 0 ? 0 : d.index, why, sizeof why) == 0) {
        *ops = &ops_cuda;
        return 0;
    }
    snprintf(err, errlen, "device %s: %s", device, why);
#else
    snprintf(err, errlen, "device %s: this build has no CUDA backend (no nvcc)", device);
#endif
    return -1;
}
