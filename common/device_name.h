/* Device names, read in one place for the spec (resources.device), the
 * worker (--device), the server's worker registry and its lease policy:
 * "cpu", "cuda", "cuda:N" (the N-th GPU, as nvidia-smi counts them with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID) and "any" (a spec that runs anywhere). */
#ifndef COD_DEVICE_NAME_H
#define COD_DEVICE_NAME_H

enum device_kind { DEVICE_CPU, DEVICE_CUDA, DEVICE_ANY };

struct device_name {
    enum device_kind kind;
    int index;             /* cuda:N's N; -1 when no index was given */
};

/* 0 with *d filled, or -1 when name is none of the forms above. */
int device_parse(const char *name, struct device_name *d);
/* The kind's name, as queue and worker rows hold it: "cpu", "cuda", "any". */
const char *device_kind_name(enum device_kind kind);

#endif
