/* The CUDA libraries cod opens with dlopen rather than links (cuBLASLt,
 * cuDNN, NCCL), so that its programs start, and say what is missing, on
 * machines without them: each is looked for on the loader's path, then in
 * the toolkit the build used, and its entry points are resolved by name. */
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

#include "kernels/cuda/internal.h"

#ifndef COD_CUDA_LIBDIR /* set by the Makefile to the toolkit's lib64 */
#define COD_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif

/* dlerror's words, without the name of the file asked for when they start
 * with it */
static const char *unprefixed(const char *e, const char *name)
{
    size_t n = strlen(name);
    if (!e)
        return "";
    return strncmp(e, name, n) == 0 && strncmp(e + n, ": ", 2) == 0 ? e + n + 2 : e;
}

void *cuda_open_library(const char *soname, const char *what, const struct cuda_symbol *syms,
                        size_t n, char *why, size_t len)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        int k = snprintf(why, len, "cannot load %s (%s): %s", soname, what,
                         unprefixed(dlerror(), soname));
        char there[512];
        snprintf(there, sizeof there, "%s/%s", COD_CUDA_LIBDIR, soname);
        /* the toolkit's copy, where there is one: its failure is told too */
        if (access(there, F_OK) != 0)
            return NULL;
        if (!(lib = dlopen(there, RTLD_NOW | RTLD_LOCAL))) {
            if (k > 0 && (size_t)k < len)
                snprintf(why + k, len - k, "; %s: %s", there, unprefixed(dlerror(), there));
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!(*syms[i].slot = dlsym(lib, syms[i].name))) {
            snprintf(why, len, "%s has no %s", soname, syms[i].name);
            dlclose(lib);
            return NULL;
        }
    return lib;
}
