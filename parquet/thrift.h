/* The Thrift compact protocol, read only: what Parquet's footer and page
 * headers are written in. A reader walks a buffer field by field; every
 * read is bounds-checked, and a read past the end or a malformed value
 * sets a flag instead of returning garbage, so a caller parses a whole
 * struct and checks once. Running out of bytes (`short_read`) is told
 * apart from bytes that are no Thrift at all (`bad`): a page header is
 * read from a window of the file that may be widened and tried again. */
#ifndef COD_PARQUET_THRIFT_H
#define COD_PARQUET_THRIFT_H

#include <stddef.h>
#include <stdint.h>

enum tc_type {
    TC_STOP = 0,
    TC_TRUE = 1,
    TC_FALSE = 2,
    TC_BYTE = 3,
    TC_I16 = 4,
    TC_I32 = 5,
    TC_I64 = 6,
    TC_DOUBLE = 7,
    TC_BINARY = 8,
    TC_LIST = 9,
    TC_SET = 10,
    TC_MAP = 11,
    TC_STRUCT = 12
};

struct tc {
    const uint8_t *p, *end;
    int short_read; /* needed bytes past the end */
    int bad;        /* not Thrift: a type, a size or a nesting out of range */
    int oom;        /* an allocation of the caller's failed */
    int depth;      /* structs entered */
    char why[120];  /* what was bad */
};

void tc_init(struct tc *t, const void *data, size_t n);
static inline int tc_ok(const struct tc *t) { return !t->short_read && !t->bad && !t->oom; }

/* Inside a struct: the next field's type (TC_STOP at the struct's end)
 * and its id, counted from *last (0 when the struct starts). */
int tc_field(struct tc *t, int16_t *last, int16_t *id);
int tc_byte(struct tc *t);
int32_t tc_i32(struct tc *t);
int64_t tc_i64(struct tc *t);
double tc_double(struct tc *t);
/* A binary or string field: points into the buffer. */
const uint8_t *tc_binary(struct tc *t, uint32_t *len);
/* A list or set header: its element type and count. The count is checked
 * against the bytes left (an element takes one at least), so that a
 * caller may allocate it. */
int tc_list(struct tc *t, uint32_t *count);
/* Entering and leaving a nested struct (bounded nesting). */
void tc_enter(struct tc *t);
void tc_leave(struct tc *t);
/* Skips a value of that type (a field the reader does not use). */
void tc_skip(struct tc *t, int type);
/* A field of an unexpected type: marks the input bad. */
void tc_wrong(struct tc *t, int16_t id, int type);

#endif
