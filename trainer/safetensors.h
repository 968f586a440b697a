/* safetensors files: an 8-byte little-endian header length, a JSON header
 * mapping each tensor name to dtype, shape and byte offsets, then the data.
 * Checkpoints and exports use it so that Hugging Face tools read them. */
#ifndef COD_SAFETENSORS_H
#define COD_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum st_dtype { ST_F32, ST_F64, ST_BF16, ST_I64, ST_F16 };

struct st_tensor {
    char name[160];
    enum st_dtype dtype;
    int ndim;
    int64_t shape[4];
    const void *data;      /* writer: host pointer to the elements */
};

/* Writes the tensors atomically: PATH.tmp, fsync, rename, fsync of the
 * directory. metadata may be NULL or a list of n_meta key/value pairs. */
int st_write(const char *path, const struct st_tensor *t, int n,
             const char *const *meta_kv, int n_meta, char *err, size_t errlen);

/* A file read whole into memory (or mapped), tensors looked up by name. */
struct st_file {
    unsigned char *buf;
    size_t len;
    int mapped;
    struct st_tensor *tensors;
    int n;
};

int st_read(const char *path, struct st_file *f, char *err, size_t errlen);
/* The same with the file mapped instead of read: a pretrained model's
 * shards, of which only the tensor being converted need be in memory. */
int st_map(const char *path, struct st_file *f, char *err, size_t errlen);
/* Elements [first, first + n) of a float tensor (any float dtype) as float;
 * the caller has checked its dtype is not I64 and the range. */
void st_to_f32(const struct st_tensor *t, size_t first, size_t n, float *dst);
/* The tensor of that name, or NULL. */
const struct st_tensor *st_find(const struct st_file *f, const char *name);
/* Copies a tensor into dst as float or double (converting from any float
 * dtype), after checking its shape; -1 with err naming the tensor otherwise. */
int st_get_f32(const struct st_file *f, const char *name, const int64_t *shape, int ndim,
               float *dst, char *err, size_t errlen);
int st_get_f64(const struct st_file *f, const char *name, const int64_t *shape, int ndim,
               double *dst, char *err, size_t errlen);
void st_free(struct st_file *f);

#endif
