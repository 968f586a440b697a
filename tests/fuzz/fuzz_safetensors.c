/* libFuzzer harness: the safetensors reader (trainer/safetensors.c), which
 * reads checkpoints a worker may have been handed by another and models to
 * export: st_read on the input as a file, then every tensor it accepts
 * looked up by name and copied out as float and as double, as
 * checkpoint loading does. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_util.h"
#include "trainer/safetensors.h"

static size_t numel(const struct st_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file("model.safetensors", data, size);
    struct st_file f;
    char err[1024];
    if (st_read(path, &f, err, sizeof err) != 0)
        return 0;
    for (int i = 0; i < f.n; i++) {
        const struct st_tensor *t = &f.tensors[i];
        if (st_find(&f, t->name) != t)
            fuzz_die("tensor %s is not found by its name", t->name);
        size_t n = numel(t);
        float *x = malloc((n ? n : 1) * sizeof *x);
        double *y = malloc((n ? n : 1) * sizeof *y);
        if (!x || !y)
            fuzz_die("out of memory for %zu elements", n);
        int a = st_get_f32(&f, t->name, t->shape, t->ndim, x, err, sizeof err);
        int b = st_get_f64(&f, t->name, t->shape, t->ndim, y, err, sizeof err);
        if (a != b || (a != 0) != (t->dtype == ST_I64))
            fuzz_die("tensor %s: float and double reads disagree", t->name);
        free(x);
        free(y);
    }
    st_free(&f);
    return 0;
}
