/* Row sets: see rowset.h. */
#include "common/rowset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/path.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "row sets are read in place: a little-endian host");

#define MAGIC "codrows1"
enum { HEADER = 64 };

struct header {
    char magic[8];
    uint32_t row_tokens, reserved;
    uint64_t n_rows, n_tokens, n_targets, index_at;
    unsigned char pad[HEADER - 48];
};
_Static_assert(sizeof(struct header) == HEADER, "the header is 64 bytes");

/* Why a mapped file is no row set, or NULL; checks every row against the index. */
static const char *problem(const unsigned char *map, size_t size, struct rowset *r)
{
    if (size < HEADER)
        return "shorter than a row set's header";
    struct header h;
    memcpy(&h, map, sizeof h);
    if (memcmp(h.magic, MAGIC, 8))
        return "not a row set (no \"codrows1\" magic)";
    if (h.row_tokens < 2 || h.index_at < HEADER || h.index_at > size || h.index_at % 8 ||
        (size - h.index_at) / sizeof(struct rowset_entry) != h.n_rows ||
        (size - h.index_at) % sizeof(struct rowset_entry))
        return "its header does not match its size (truncated or corrupt)";
    r->index = (const struct rowset_entry *)(const void *)(map + h.index_at);
    int64_t tokens = 0, targets = 0;
    for (uint64_t k = 0; k < h.n_rows; k++) {
        const struct rowset_entry *e = &r->index[k];
        if (e->len < 2 || e->len > h.row_tokens || e->offset % 4 || e->offset < HEADER ||
            e->offset + 5ull * e->len > h.index_at || e->targets >= e->len)
            return "a row of its index lies outside the file or exceeds the longest row";
        tokens += e->len;
        targets += e->targets;
    }
    if ((uint64_t)tokens != h.n_tokens || (uint64_t)targets != h.n_targets)
        return "its index does not add up to its header's counts";
    r->n_rows = (int64_t)h.n_rows;
    r->n_tokens = tokens;
    r->n_targets = targets;
    r->row_tokens = (int)h.row_tokens;
    return NULL;
}

int rowset_open(struct rowset *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (path_copy(r->path, sizeof r->path, path, err, errlen))
        return -1;
    struct stat st;
    int fd = fio_open_stat(path, &st, err, errlen);
    if (fd < 0)
        return -1;
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    int e = errno;
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: %s", path, size ? strerror(e) : "empty, not a row set");
        return -1;
    }
    const char *why = problem(map, size, r);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        munmap(map, size);
        return -1;
    }
    r->map = map;
    r->map_len = size;
    return 0;
}

void rowset_close(struct rowset *r)
{
    if (r->map)
        munmap((void *)r->map, r->map_len);
    memset(r, 0, sizeof *r);
}

static int fail_write(struct rowset_writer *w, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: cannot write: %s", w->out.path, strerror(errno));
    rowset_writer_abort(w);
    return -1;
}

int rowset_writer_open(struct rowset_writer *w, const char *path, int row_tokens, char *err,
                       size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->out.fd = -1;
    w->row_tokens = row_tokens;
    if (fio_temp_open(&w->out, path, err, errlen))
        return -1;
    /* the header is written at close, when the counts are known */
    unsigned char zero[HEADER] = {0};
    if (fio_write_all(w->out.fd, zero, HEADER))
        return fail_write(w, err, errlen);
    w->at = HEADER;
    return 0;
}

int rowset_writer_add(struct rowset_writer *w, const uint32_t *tok, const uint8_t *target, int n,
                      char *err, size_t errlen)
{
    if (n < 2 || n > w->row_tokens) {
        snprintf(err, errlen, "%s: a row of %d tokens (from 2 to %d)", w->out.path, n,
                 w->row_tokens);
        rowset_writer_abort(w);
        return -1;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4096;
        struct rowset_entry *x = realloc(w->index, cap * sizeof *x);
        if (!x) {
            snprintf(err, errlen, "%s: out of memory for the index of %zu rows", w->out.path, cap);
            rowset_writer_abort(w);
            return -1;
        }
        w->index = x;
        w->cap = cap;
    }
    uint32_t targets = 0;
    uint8_t flags[n + 4];
    for (int i = 0; i < n; i++) {
        flags[i] = i > 0 && target[i];
        targets += flags[i];
    }
    size_t fl = ((size_t)n + 3) / 4 * 4;
    memset(flags + n, 0, fl - (size_t)n);
    if (fio_write_all(w->out.fd, tok, 4 * (size_t)n) || fio_write_all(w->out.fd, flags, fl))
        return fail_write(w, err, errlen);
    w->index[w->n++] = (struct rowset_entry){w->at, (uint32_t)n, targets};
    w->at += 4 * (uint64_t)n + fl;
    w->n_tokens += n;
    w->n_targets += targets;
    return 0;
}

int rowset_writer_close(struct rowset_writer *w, char *err, size_t errlen)
{
    /* the index is read in place: its uint64 offsets on an 8-byte boundary */
    static const unsigned char pad[8];
    size_t gap = (size_t)((8 - w->at % 8) % 8);
    if (gap && fio_write_all(w->out.fd, pad, gap))
        return fail_write(w, err, errlen);
    w->at += gap;
    struct header h = {.row_tokens = (uint32_t)w->row_tokens, .n_rows = w->n,
                       .n_tokens = (uint64_t)w->n_tokens, .n_targets = (uint64_t)w->n_targets,
                       .index_at = w->at};
    memcpy(h.magic, MAGIC, 8);
    if (fio_write_all(w->out.fd, w->index, w->n * sizeof *w->index) ||
        pwrite(w->out.fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        return fail_write(w, err, errlen);
    free(w->index);
    w->index = NULL;
    return fio_temp_commit(&w->out, 0, err, errlen);
}

void rowset_writer_abort(struct rowset_writer *w)
{
    free(w->index);
    w->index = NULL;
    if (w->out.fd >= 0)
        fio_temp_abort(&w->out);
    w->out.fd = -1;
}
