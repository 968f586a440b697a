#include "trainer/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/fileio.h"
#include "common/path.h"

/* Tensor bytes are written and read as they lie in memory, and the format
 * is little-endian. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host"
#endif

/* The reference implementation's limit: a header larger than this is
 * taken for corruption rather than allocated. */
#define MAX_HEADER (100u << 20)

static const char *const dtype_names[] = {"F32", "F64", "BF16", "I64", "F16"};
static const size_t dtype_sizes[] = {4, 8, 2, 8, 2};

static int dtype_from_name(const char *s)
{
    for (int i = 0; i < 5; i++)
        if (strcmp(dtype_names[i], s) == 0)
            return i;
    return -1;
}

/* Element count of a shape, -1 when a dimension is negative or the byte
 * size (elements × elem_size) would overflow. */
static int64_t shape_bytes(const int64_t *shape, int ndim, size_t elem_size)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return -1;
        if (shape[i] && n > INT64_MAX / shape[i])
            return -1;
        n *= shape[i];
    }
    if (n > INT64_MAX / (int64_t)elem_size)
        return -1;
    return n * (int64_t)elem_size;
}

static void shape_str(char *out, size_t outlen, const int64_t *shape, int ndim)
{
    size_t k = (size_t)snprintf(out, outlen, "[");
    for (int i = 0; i < ndim && k < outlen; i++)
        k += (size_t)snprintf(out + k, outlen - k, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (k < outlen)
        snprintf(out + k, outlen - k, "]");
}

/* The header JSON, padded with spaces to a multiple of 8 so that the data
 * (and with it every 8-byte-aligned tensor) starts aligned. NULL with err
 * filled on a bad tensor list or out of memory. */
static char *build_header(const char *path, const struct st_tensor *t, int n,
                          const char *const *meta_kv, int n_meta, size_t *hlen, char *err,
                          size_t errlen)
{
    json_t *root = json_object();
    if (!root) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    const char *why = NULL, *who = "";
    if (n_meta > 0) {
        json_t *meta = json_object();
        if (json_object_set_new(root, "__metadata__", meta))
            why = "out of memory";
        for (int i = 0; !why && i < n_meta; i++) {
            if (!meta_kv[2 * i] || !meta_kv[2 * i + 1])
                why = "metadata key or value is NULL";
            else if (json_object_set_new(meta, meta_kv[2 * i], json_string(meta_kv[2 * i + 1])))
                why = "metadata is not valid UTF-8, or out of memory";
        }
    }
    int64_t off = 0;
    for (int i = 0; !why && i < n; i++) {
        who = t[i].name;
        int64_t bytes = -1;
        if (!t[i].name[0] || strcmp(t[i].name, "__metadata__") == 0)
            why = "invalid tensor name";
        else if (json_object_get(root, t[i].name))
            why = "duplicate tensor name";
        else if ((unsigned)t[i].dtype > ST_F16)
            why = "unknown dtype";
        else if (t[i].ndim < 0 || t[i].ndim > 4)
            why = "ndim must be 0 to 4";
        else if ((bytes = shape_bytes(t[i].shape, t[i].ndim, dtype_sizes[t[i].dtype])) < 0 ||
                 off > INT64_MAX - bytes)
            why = "invalid shape";
        else if (bytes > 0 && !t[i].data)
            why = "no data";
        if (why)
            break;
        json_t *shape = json_array();
        int bad = !shape;
        for (int d = 0; !bad && d < t[i].ndim; d++)
            bad = json_array_append_new(shape, json_integer(t[i].shape[d]));
        /* json_pack's "o" takes the shape's reference, even when it fails */
        json_t *entry = bad ? NULL
                            : json_pack("{s:s, s:o, s:[I,I]}", "dtype", dtype_names[t[i].dtype],
                                        "shape", shape, "data_offsets", (json_int_t)off,
                                        (json_int_t)(off + bytes));
        if (bad)
            json_decref(shape);
        if (!entry || json_object_set_new(root, t[i].name, entry)) {
            why = "out of memory (or name not valid UTF-8)";
            break;
        }
        off += bytes;
    }
    char *text = why ? NULL : json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (why) {
        if (who[0])
            snprintf(err, errlen, "%s: tensor %s: %s", path, who, why);
        else
            snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    size_t len = strlen(text), padded = (len + 7) / 8 * 8;
    char *h = realloc(text, padded ? padded : 8);
    if (!h) {
        free(text);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    memset(h + len, ' ', padded - len);
    *hlen = padded;
    return h;
}

int st_write(const char *path, const struct st_tensor *t, int n, const char *const *meta_kv,
             int n_meta, char *err, size_t errlen)
{
    if (n < 0 || n_meta < 0 || (n_meta > 0 && !meta_kv)) {
        snprintf(err, errlen, "%s: invalid tensor or metadata count", path);
        return -1;
    }
    char tmp[4200];
    if (path_fmt(tmp, sizeof(tmp), err, errlen, "%s.tmp", path) != 0)
        return -1;
    size_t hlen = 0;
    char *header = build_header(path, t, n, meta_kv, n_meta, &hlen, err, errlen);
    if (!header)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        free(header);
        return -1;
    }
    unsigned char len8[8];
    for (int b = 0; b < 8; b++)
        len8[b] = (unsigned char)((uint64_t)hlen >> (8 * b));
    const char *step = "write";
    int rc = fio_write_all(fd, len8, 8) || fio_write_all(fd, header, hlen);
    free(header);
    for (int i = 0; rc == 0 && i < n; i++) {
        int64_t bytes = shape_bytes(t[i].shape, t[i].ndim, dtype_sizes[t[i].dtype]);
        if (bytes > 0)
            rc = fio_write_all(fd, t[i].data, (size_t)bytes);
    }
    if (rc == 0 && (step = "fsync", fsync(fd) != 0))
        rc = -1;
    int saved = errno;
    if (close(fd) != 0 && rc == 0) {
        step = "close";
        rc = -1;
        saved = errno;
    }
    if (rc == 0 && (step = "rename", rename(tmp, path) != 0)) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s failed: %s", path, step, strerror(saved));
        unlink(tmp);
        return -1;
    }
    /* The rename is durable only once the directory entry is on disk. */
    if (fio_fsync_dir_of(path) != 0) {
        snprintf(err, errlen, "%s: fsync of its directory failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int cmp_begin(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Parses one header entry into *t and its [begin, end) byte range. */
static const char *parse_entry(json_t *e, int64_t data_len, struct st_tensor *t, int64_t *range)
{
    if (!json_is_object(e))
        return "entry is not an object";
    json_t *dt = json_object_get(e, "dtype"), *sh = json_object_get(e, "shape"),
           *off = json_object_get(e, "data_offsets");
    if (!json_is_string(dt) || !json_is_array(sh) || !json_is_array(off))
        return "entry lacks dtype, shape or data_offsets";
    if (json_object_size(e) != 3)
        return "entry has unknown keys";
    int d = dtype_from_name(json_string_value(dt));
    if (d < 0)
        return "unsupported dtype (F32, F64, BF16, F16 and I64 are read)";
    t->dtype = (enum st_dtype)d;
    if (json_array_size(sh) > 4)
        return "more than 4 dimensions";
    t->ndim = (int)json_array_size(sh);
    for (int i = 0; i < t->ndim; i++) {
        json_t *x = json_array_get(sh, (size_t)i);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return "shape is not a list of non-negative integers";
        t->shape[i] = json_integer_value(x);
    }
    json_t *b = json_array_get(off, 0), *en = json_array_get(off, 1);
    if (json_array_size(off) != 2 || !json_is_integer(b) || !json_is_integer(en))
        return "data_offsets is not [begin, end]";
    range[0] = json_integer_value(b);
    range[1] = json_integer_value(en);
    if (range[0] < 0 || range[1] < range[0])
        return "data_offsets out of order";
    if (range[1] > data_len)
        return "data_offsets beyond the end of the file (truncated?)";
    int64_t bytes = shape_bytes(t->shape, t->ndim, dtype_sizes[d]);
    if (bytes < 0 || bytes != range[1] - range[0])
        return "byte size does not match shape and dtype";
    return NULL;
}

static void release(unsigned char *buf, size_t len, int mapped)
{
    if (mapped && len)
        munmap(buf, len);
    else if (!mapped)
        free(buf);
}

/* Parses the header of the file's bytes buf[0, len) into f, which takes
 * buf (freed or unmapped by st_free, and on failure here). */
static int parse_file(const char *path, unsigned char *buf, size_t len, int mapped,
                      struct st_file *f, char *err, size_t errlen)
{
    uint64_t hlen = 0;
    for (int b = 0; b < 8 && len >= 8; b++)
        hlen |= (uint64_t)buf[b] << (8 * b);
    const char *why = NULL;
    if (len < 8)
        why = "truncated: shorter than the 8-byte header length";
    else if (hlen > MAX_HEADER)
        why = "header length is implausible (corrupt file?)";
    else if (hlen > len - 8)
        why = "truncated: the header runs past the end of the file";
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        release(buf, len, mapped);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
    if (!root || !json_is_object(root)) {
        if (root)
            snprintf(err, errlen, "%s: header is not a JSON object", path);
        else
            snprintf(err, errlen, "%s: corrupt header: %s (at byte %d)", path, je.text,
                     je.position);
        json_decref(root);
        release(buf, len, mapped);
        return -1;
    }
    size_t cap = json_object_size(root);
    const unsigned char *data = buf + 8 + hlen;
    int64_t data_len = (int64_t)(len - 8 - hlen);
    struct st_tensor *ts = calloc(cap ? cap : 1, sizeof(*ts));
    int64_t *ranges = calloc(cap ? cap : 1, 2 * sizeof(int64_t));
    int n = 0;
    const char *key, *bad = ""; /* bad: the tensor an error is about */
    json_t *v;
    if (!ts || !ranges)
        why = "out of memory";
    json_object_foreach(root, key, v) {
        if (why)
            break;
        if (strcmp(key, "__metadata__") == 0) {
            /* Only validated: nothing here needs what it says. */
            const char *mk;
            json_t *mv;
            if (!json_is_object(v))
                why = "__metadata__ is not an object";
            json_object_foreach(v, mk, mv) {
                if (!json_is_string(mv))
                    why = "__metadata__ holds a value that is not a string";
            }
            continue;
        }
        struct st_tensor *t = &ts[n];
        bad = key;
        if (strlen(key) >= sizeof(t->name)) {
            why = "tensor name too long";
            break;
        }
        snprintf(t->name, sizeof(t->name), "%s", key);
        why = parse_entry(v, data_len, t, &ranges[2 * n]);
        if (why)
            break;
        bad = "";
        t->data = data + ranges[2 * n];
        n++;
    }
    if (!why) {
        /* Tensors may come in any order in the header but must not share bytes. */
        qsort(ranges, (size_t)n, 2 * sizeof(int64_t), cmp_begin);
        for (int i = 1; i < n && !why; i++)
            if (ranges[2 * i] < ranges[2 * i - 1])
                why = "tensors overlap";
    }
    if (why) {
        if (bad[0])
            snprintf(err, errlen, "%s: tensor %s: %s", path, bad, why);
        else
            snprintf(err, errlen, "%s: %s", path, why);
        json_decref(root);
        free(ts);
        free(ranges);
        release(buf, len, mapped);
        return -1;
    }
    json_decref(root);
    free(ranges);
    f->buf = buf;
    f->len = len;
    f->mapped = mapped;
    f->tensors = ts;
    f->n = n;
    return 0;
}

int st_read(const char *path, struct st_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    unsigned char *buf;
    size_t len;
    if (fio_read_file(path, &buf, &len, err, errlen))
        return -1;
    return parse_file(path, buf, len, 0, f, err, errlen);
}

int st_map(const char *path, struct st_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof(*f));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t len = (size_t)sb.st_size;
    void *p = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    int saved = errno;
    close(fd);
    if (len && p == MAP_FAILED) {
        snprintf(err, errlen, "%s: cannot map it: %s", path, strerror(saved));
        return -1;
    }
    return parse_file(path, p, len, 1, f, err, errlen);
}

const struct st_tensor *st_find(const struct st_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

/* Looks a tensor up and checks its shape and that it holds floats. */
static const struct st_tensor *lookup(const struct st_file *f, const char *name,
                                      const int64_t *shape, int ndim, char *err, size_t errlen)
{
    const struct st_tensor *t = st_find(f, name);
    if (!t) {
        snprintf(err, errlen, "tensor %s: missing", name);
        return NULL;
    }
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = t->shape[i] == shape[i];
    if (!same) {
        char got[128], want[128];
        shape_str(got, sizeof(got), t->shape, t->ndim);
        shape_str(want, sizeof(want), shape, ndim);
        snprintf(err, errlen, "tensor %s: shape %s expected %s", name, got, want);
        return NULL;
    }
    if (t->dtype == ST_I64) {
        snprintf(err, errlen, "tensor %s: dtype I64 is not a float type", name);
        return NULL;
    }
    return t;
}

static size_t numel(const struct st_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

/* IEEE half precision to float, subnormals, infinities and NaN included. */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (e == 0x1f) {
        bits = sign | 0x7f800000u | mant << 13;
    } else if (e) {
        bits = sign | (e + 112) << 23 | mant << 13;
    } else if (mant) {
        /* subnormal: normalise the mantissa */
        e = 113;
        while (!(mant & 0x400)) {
            mant <<= 1;
            e--;
        }
        bits = sign | e << 23 | (mant & 0x3ff) << 13;
    } else {
        bits = sign;
    }
    float x;
    memcpy(&x, &bits, 4);
    return x;
}

/* Element i of a float tensor as a double; memcpy because a foreign
 * file's offsets need not be aligned. */
static double element(const struct st_tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    if (t->dtype == ST_F32) {
        float x;
        memcpy(&x, p + 4 * i, 4);
        return x;
    }
    if (t->dtype == ST_F64) {
        double x;
        memcpy(&x, p + 8 * i, 8);
        return x;
    }
    if (t->dtype == ST_F16)
        return half_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    uint32_t bits = ((uint32_t)p[2 * i] | ((uint32_t)p[2 * i + 1] << 8)) << 16;
    float x;
    memcpy(&x, &bits, 4);
    return x;
}

void st_to_f32(const struct st_tensor *t, size_t first, size_t n, float *dst)
{
    if (t->dtype == ST_F32) {
        memcpy(dst, (const unsigned char *)t->data + 4 * first, 4 * n);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)element(t, first + i);
}

/* Copies a tensor into float or double storage (want), converting from
 * any float dtype; a tensor already in that dtype is copied as is. */
static int get_as(const struct st_file *f, const char *name, const int64_t *shape, int ndim,
                  void *dst, enum st_dtype want, char *err, size_t errlen)
{
    const struct st_tensor *t = lookup(f, name, shape, ndim, err, errlen);
    if (!t)
        return -1;
    size_t n = numel(t), size = want == ST_F32 ? 4 : 8;
    if (t->dtype == want) {
        if (n)
            memcpy(dst, t->data, n * size);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        double x = element(t, i);
        if (want == ST_F32)
            ((float *)dst)[i] = (float)x;
        else
            ((double *)dst)[i] = x;
    }
    return 0;
}

int st_get_f32(const struct st_file *f, const char *name, const int64_t *shape, int ndim,
               float *dst, char *err, size_t errlen)
{
    return get_as(f, name, shape, ndim, dst, ST_F32, err, errlen);
}

int st_get_f64(const struct st_file *f, const char *name, const int64_t *shape, int ndim,
               double *dst, char *err, size_t errlen)
{
    return get_as(f, name, shape, ndim, dst, ST_F64, err, errlen);
}

void st_free(struct st_file *f)
{
    release(f->buf, f->len, f->mapped);
    free(f->tensors);
    memset(f, 0, sizeof(*f));
}
