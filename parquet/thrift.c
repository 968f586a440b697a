/* The Thrift compact protocol, read only: see thrift.h. */
#include "parquet/thrift.h"

#include <stdio.h>
#include <string.h>

#define TC_MAX_DEPTH 32

void tc_init(struct tc *t, const void *data, size_t n)
{
    memset(t, 0, sizeof(*t));
    t->p = data;
    t->end = t->p + n;
}

static void bad(struct tc *t, const char *why)
{
    if (!t->bad && !t->short_read)
        snprintf(t->why, sizeof(t->why), "%s", why);
    t->bad = 1;
}

static int need(struct tc *t, size_t n)
{
    if (!tc_ok(t))
        return 0;
    if ((size_t)(t->end - t->p) < n) {
        t->short_read = 1;
        snprintf(t->why, sizeof(t->why), "ends inside a value");
        return 0;
    }
    return 1;
}

static uint64_t varint(struct tc *t)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (!need(t, 1))
            return 0;
        uint8_t b = *t->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    bad(t, "a varint longer than 10 bytes");
    return 0;
}

static int64_t zigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int tc_field(struct tc *t, int16_t *last, int16_t *id)
{
    if (!need(t, 1))
        return TC_STOP;
    uint8_t b = *t->p++;
    int type = b & 0x0f;
    if (type == TC_STOP)
        return TC_STOP;
    if (type > TC_STRUCT) {
        bad(t, "an unknown field type");
        return TC_STOP;
    }
    int delta = b >> 4;
    if (delta)
        *id = (int16_t)(*last + delta);
    else {
        int64_t v = zigzag(varint(t));
        if (v < INT16_MIN || v > INT16_MAX) {
            bad(t, "a field id out of range");
            return TC_STOP;
        }
        *id = (int16_t)v;
    }
    *last = *id;
    return tc_ok(t) ? type : TC_STOP;
}

int tc_byte(struct tc *t)
{
    return need(t, 1) ? (int8_t)*t->p++ : 0;
}

int32_t tc_i32(struct tc *t)
{
    int64_t v = zigzag(varint(t));
    if (v < INT32_MIN || v > INT32_MAX) {
        bad(t, "an i32 out of range");
        return 0;
    }
    return (int32_t)v;
}

int64_t tc_i64(struct tc *t) { return zigzag(varint(t)); }

double tc_double(struct tc *t)
{
    double d = 0;
    if (need(t, 8)) {
        memcpy(&d, t->p, 8);
        t->p += 8;
    }
    return d;
}

const uint8_t *tc_binary(struct tc *t, uint32_t *len)
{
    uint64_t n = varint(t);
    *len = 0;
    if (!tc_ok(t))
        return NULL;
    if (n > UINT32_MAX) {
        bad(t, "a binary longer than 4 GB");
        return NULL;
    }
    if (!need(t, (size_t)n))
        return NULL;
    const uint8_t *p = t->p;
    t->p += n;
    *len = (uint32_t)n;
    return p;
}

int tc_list(struct tc *t, uint32_t *count)
{
    *count = 0;
    if (!need(t, 1))
        return TC_STOP;
    uint8_t b = *t->p++;
    uint64_t n = b >> 4;
    int type = b & 0x0f;
    if (n == 15)
        n = varint(t);
    if (!tc_ok(t))
        return TC_STOP;
    if (type == TC_STOP || type > TC_STRUCT) {
        bad(t, "a list of an unknown type");
        return TC_STOP;
    }
    /* every element takes a byte at least: a count past the bytes left is
     * either a short read or a lie */
    if (n > (uint64_t)(t->end - t->p)) {
        if (n > UINT32_MAX)
            bad(t, "a list longer than 4 G elements");
        else {
            t->short_read = 1;
            snprintf(t->why, sizeof(t->why), "ends inside a list");
        }
        return TC_STOP;
    }
    *count = (uint32_t)n;
    return type;
}

void tc_enter(struct tc *t)
{
    if (++t->depth > TC_MAX_DEPTH)
        bad(t, "structs nested too deep");
}

void tc_leave(struct tc *t) { t->depth--; }

/* Inside a list or map a boolean is a byte of its own, not a field type. */
static int elem_type(int type) { return type == TC_TRUE || type == TC_FALSE ? TC_BYTE : type; }

void tc_skip(struct tc *t, int type)
{
    if (!tc_ok(t))
        return;
    switch (type) {
    case TC_TRUE:
    case TC_FALSE:
        break;
    case TC_BYTE:
        if (need(t, 1))
            t->p++;
        break;
    case TC_I16:
    case TC_I32:
    case TC_I64:
        varint(t);
        break;
    case TC_DOUBLE:
        if (need(t, 8))
            t->p += 8;
        break;
    case TC_BINARY: {
        uint32_t n;
        tc_binary(t, &n);
        break;
    }
    case TC_LIST:
    case TC_SET: {
        uint32_t n;
        int et = tc_list(t, &n);
        tc_enter(t);
        for (uint32_t i = 0; i < n && tc_ok(t); i++)
            tc_skip(t, elem_type(et));
        tc_leave(t);
        break;
    }
    case TC_MAP: {
        uint64_t n = varint(t);
        if (!tc_ok(t) || n == 0)
            break;
        if (!need(t, 1))
            break;
        uint8_t kv = *t->p++;
        int kt = kv >> 4, vt = kv & 0x0f;
        if (kt == TC_STOP || kt > TC_STRUCT || vt == TC_STOP || vt > TC_STRUCT) {
            bad(t, "a map of an unknown type");
            break;
        }
        /* two bytes an entry at least */
        if (n > (uint64_t)(t->end - t->p) / 2) {
            t->short_read = 1;
            snprintf(t->why, sizeof(t->why), "ends inside a map");
            break;
        }
        tc_enter(t);
        for (uint64_t i = 0; i < n && tc_ok(t); i++) {
            tc_skip(t, elem_type(kt));
            tc_skip(t, elem_type(vt));
        }
        tc_leave(t);
        break;
    }
    case TC_STRUCT: {
        int16_t last = 0, id;
        tc_enter(t);
        for (int ft; tc_ok(t) && (ft = tc_field(t, &last, &id)) != TC_STOP;)
            tc_skip(t, ft);
        tc_leave(t);
        break;
    }
    default:
        bad(t, "an unknown type");
    }
}

void tc_wrong(struct tc *t, int16_t id, int type)
{
    char why[80];
    snprintf(why, sizeof(why), "field %d has type %d, not the one Parquet gives it", id, type);
    bad(t, why);
}
