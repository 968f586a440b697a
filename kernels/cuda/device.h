/* The CUDA device probe, callable from C. A binary built with CUDA must
 * start on a machine without a GPU and say so plainly instead of crashing. */
#ifndef COD_CUDA_DEVICE_H
#define COD_CUDA_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when device `index` exists and can be selected; -1 with err saying why
 * ("no GPU: …", or the devices there are, or an attention setting that
 * cannot hold: COD_ATTENTION=cudnn where cuDNN cannot be used). */
int cuda_probe(int index, char *err, size_t errlen);

/* Bytes in use and in all on the current device (every process's use), or
 * -1 with err. */
int cuda_memory(size_t *used, size_t *total, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
