/* FileMetaData through the Thrift compact protocol: see meta.h. The field
 * ids are parquet.thrift's. */
#include "parquet/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/thrift.h"

const char *pq_codec_name(int codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
    return codec >= 0 && codec < 8 ? names[codec] : "unknown";
}

const char *pq_type_name(int type)
{
    static const char *const names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                                        "FIXED_LEN_BYTE_ARRAY"};
    return type >= 0 && type < 8 ? names[type] : "unknown";
}

/* A field whose type is not the expected one: skipped over, the input bad. */
static int want(struct tc *t, int16_t id, int type, int expected)
{
    if (type == expected)
        return 1;
    tc_wrong(t, id, type);
    return 0;
}

static int is_bool(int type) { return type == TC_TRUE || type == TC_FALSE; }

static void logical_type(struct tc *t, struct pq_element *e)
{
    int16_t last = 0, id;
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (ft != TC_STRUCT) {
            tc_skip(t, ft);
            continue;
        }
        e->logical = id;
        if (id != PQ_LT_INTEGER) {
            tc_skip(t, ft);
            continue;
        }
        int16_t l2 = 0, i2;
        tc_enter(t);
        for (int f2; (f2 = tc_field(t, &l2, &i2)) != TC_STOP;) {
            if (i2 == 1 && want(t, i2, f2, TC_BYTE))
                e->int_bits = tc_byte(t);
            else if (i2 == 2 && is_bool(f2))
                e->int_signed = f2 == TC_TRUE;
            else
                tc_skip(t, f2);
        }
        tc_leave(t);
    }
    tc_leave(t);
}

static void schema_element(struct tc *t, struct pq_element *e)
{
    int16_t last = 0, id;
    *e = (struct pq_element){.type = -1, .repetition = -1, .converted = -1};
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (id == 1 && want(t, id, ft, TC_I32))
            e->type = tc_i32(t);
        else if (id == 3 && want(t, id, ft, TC_I32))
            e->repetition = tc_i32(t);
        else if (id == 4 && want(t, id, ft, TC_BINARY)) {
            uint32_t n;
            const uint8_t *s = tc_binary(t, &n);
            if (s && !e->name && !(e->name = strndup((const char *)s, n)))
                t->oom = 1;
        } else if (id == 5 && want(t, id, ft, TC_I32))
            e->num_children = tc_i32(t);
        else if (id == 6 && want(t, id, ft, TC_I32))
            e->converted = tc_i32(t);
        else if (id == 10 && want(t, id, ft, TC_STRUCT))
            logical_type(t, e);
        else
            tc_skip(t, ft);
    }
    tc_leave(t);
    if (tc_ok(t) && !e->name && !(e->name = strdup("")))
        t->oom = 1;
}

static void column_meta(struct tc *t, struct pq_chunk *c)
{
    int16_t last = 0, id;
    c->has_meta = 1;
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (id == 1 && want(t, id, ft, TC_I32))
            c->type = tc_i32(t);
        else if (id == 4 && want(t, id, ft, TC_I32))
            c->codec = tc_i32(t);
        else if (id == 5 && want(t, id, ft, TC_I64))
            c->num_values = tc_i64(t);
        else if (id == 7 && want(t, id, ft, TC_I64))
            c->compressed = tc_i64(t);
        else if (id == 9 && want(t, id, ft, TC_I64))
            c->data_off = tc_i64(t);
        else if (id == 11 && want(t, id, ft, TC_I64))
            c->dict_off = tc_i64(t);
        else
            tc_skip(t, ft);
    }
    tc_leave(t);
}

static void column_chunk(struct tc *t, struct pq_chunk *c)
{
    int16_t last = 0, id;
    *c = (struct pq_chunk){.dict_off = -1};
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (id == 1 && want(t, id, ft, TC_BINARY)) {
            c->external = 1;
            tc_skip(t, ft);
        } else if (id == 3 && want(t, id, ft, TC_STRUCT))
            column_meta(t, c);
        else if (id == 8 || id == 9) {
            c->encrypted = 1;
            tc_skip(t, ft);
        } else
            tc_skip(t, ft);
    }
    tc_leave(t);
}

static void row_group(struct tc *t, struct pq_group *g)
{
    int16_t last = 0, id;
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (id == 1 && want(t, id, ft, TC_LIST)) {
            uint32_t n;
            int et = tc_list(t, &n);
            if (!tc_ok(t))
                break;
            if (et != TC_STRUCT || g->chunks) {
                tc_wrong(t, id, et);
                break;
            }
            g->chunks = calloc(n ? n : 1, sizeof(*g->chunks));
            if (!g->chunks) {
                t->oom = 1;
                break;
            }
            for (uint32_t i = 0; i < n && tc_ok(t); i++) {
                column_chunk(t, &g->chunks[i]);
                g->n_chunks++;
            }
        } else if (id == 3 && want(t, id, ft, TC_I64))
            g->rows = tc_i64(t);
        else
            tc_skip(t, ft);
    }
    tc_leave(t);
}

int pq_meta_parse(const uint8_t *buf, size_t n, struct pq_meta *m, char *why, size_t whylen)
{
    struct tc t;
    tc_init(&t, buf, n);
    memset(m, 0, sizeof(*m));
    int16_t last = 0, id;
    for (int ft; (ft = tc_field(&t, &last, &id)) != TC_STOP;) {
        if ((id == 2 || id == 4) && want(&t, id, ft, TC_LIST)) {
            uint32_t k;
            int et = tc_list(&t, &k);
            if (!tc_ok(&t))
                break;
            if (et != TC_STRUCT || (id == 2 ? m->el != NULL : m->groups != NULL)) {
                tc_wrong(&t, id, et);
                break;
            }
            if (id == 2 && !(m->el = calloc(k ? k : 1, sizeof(*m->el))))
                t.oom = 1;
            if (id == 4 && !(m->groups = calloc(k ? k : 1, sizeof(*m->groups))))
                t.oom = 1;
            for (uint32_t i = 0; i < k && tc_ok(&t); i++)
                if (id == 2)
                    schema_element(&t, &m->el[m->n_el++]);
                else
                    row_group(&t, &m->groups[m->n_groups++]);
        } else if (id == 3 && want(&t, id, ft, TC_I64))
            m->rows = tc_i64(&t);
        else if (id == 8) {
            m->encrypted = 1;
            tc_skip(&t, ft);
        } else
            tc_skip(&t, ft);
    }
    if (t.oom) {
        snprintf(why, whylen, "out of memory for its footer");
        return -1;
    }
    if (!tc_ok(&t)) {
        snprintf(why, whylen, "its footer (FileMetaData, %zu bytes) is malformed: %s at byte %td", n, t.why,
                 t.p - buf);
        return -1;
    }
    return 0;
}

void pq_meta_free(struct pq_meta *m)
{
    for (int i = 0; i < m->n_el; i++)
        free(m->el[i].name);
    free(m->el);
    for (int i = 0; i < m->n_groups; i++)
        free(m->groups[i].chunks);
    free(m->groups);
    memset(m, 0, sizeof(*m));
}
