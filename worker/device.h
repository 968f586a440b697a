/* Which ops backend trains on a --device name, for cod-train and
 * cod-worker: "cpu" is the CPU backend; "cuda:N" is probed and made the
 * current device for the CUDA backend (kernels/cuda/), so that a missing
 * GPU or a build without nvcc is told plainly before any work. */
#ifndef COD_DEVICE_H
#define COD_DEVICE_H

#include <stddef.h>

#include "kernels/ops.h"

/* 0 with *ops set, or -1 with err saying why the device cannot train. */
int device_backend(const char *device, const struct ops **ops, char *err, size_t errlen);

#endif
