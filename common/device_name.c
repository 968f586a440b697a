/* Device names: see device_name.h. */
#include "common/device_name.h"

#include <string.h>

/* More GPUs than one machine holds; it keeps the number small. */
#define MAX_INDEX 1023

int device_parse(const char *name, struct device_name *d)
{
    d->index = -1;
    if (!strcmp(name, "cpu") || !strcmp(name, "any")) {
        d->kind = name[0] == 'c' ? DEVICE_CPU : DEVICE_ANY;
        return 0;
    }
    if (strncmp(name, "cuda", 4))
        return -1;
    d->kind = DEVICE_CUDA;
    const char *p = name + 4;
    if (!*p)
        return 0;
    if (*p++ != ':' || !*p)
        return -1;
    int n = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || n > MAX_INDEX)
            return -1;
        n = n * 10 + (*p - '0');
    }
    if (n > MAX_INDEX)
        return -1;
    d->index = n;
    return 0;
}

const char *device_kind_name(enum device_kind kind)
{
    return kind == DEVICE_CPU ? "cpu" : kind == DEVICE_CUDA ? "cuda" : "any";
}
