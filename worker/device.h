/* Which ops backend trains on a --device name, for cod-train and
 * cod-worker: "cpu" is the CPU backend; "cuda:N" is checked against the
 * machine (and refused until the CUDA trainer exists), so that a wrong
 * device is told plainly before any work. */
#ifndef COD_DEVICE_H
#define COD_DEVICE_H

#include <stddef.h>

#include "kernels/ops.h"

/* 0 with *ops set, or -1 with err saying why the device cannot train. */
int device_backend(const char *device, const struct ops **ops, char *err, size_t errlen);

#endif
