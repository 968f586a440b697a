/* Instruction records into training rows: see rows.h. */
#include "sft/rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rowset.h"
#include "sft/records.h"
#include "sft/render.h"
#include "trainer/rng.h"

/* LLM-Adapters splits its held-out records with seed 42; cod's choice is
 * its own (Hugging Face's shuffle is not reproduced) but as fixed, so that
 * every seed of a sweep is evaluated on the same records. */
#define SPLIT_SEED 42

static int grow_flags(uint8_t **flags, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    size_t c = n > 2 * *cap ? n : 2 * *cap;
    uint8_t *f = realloc(*flags, c);
    if (!f)
        return -1;
    *flags = f;
    *cap = c;
    return 0;
}

int sft_record_tokens(const struct sft_tokens *t, struct tok_session *ses,
                      const struct sft_rows_cfg *c, const char *text, size_t prompt_len,
                      size_t len, struct tok_ids *ids, uint8_t **flags, size_t *flags_cap,
                      int *cut, char *err, size_t errlen)
{
    struct tok_ids prompt = {0};
    ids->n = 0;
    *cut = 0;
    int lead = !t->doc_at_end;
    if ((lead && tok_ids_push(ids, t->doc_token)) ||
        tok_encode(ses, (const unsigned char *)text, len, 0, ids, err, errlen) ||
        (!c->train_on_inputs &&
         tok_encode(ses, (const unsigned char *)text, prompt_len, 0, &prompt, err, errlen))) {
        tok_ids_free(&prompt);
        return -1;
    }
    size_t n = ids->n, p = (size_t)lead + prompt.n, cutoff = (size_t)c->cutoff_len;
    tok_ids_free(&prompt);
    if (cutoff && n > cutoff) {
        n = ids->n = cutoff;
        *cut = 1;
    }
    if (cutoff && p > cutoff)
        p = cutoff;
    if ((n == 0 || ids->v[n - 1] != t->end_token) && (!cutoff || n < cutoff)) {
        if (tok_ids_push(ids, t->end_token))
            goto oom;
        n++;
    }
    if (grow_flags(flags, flags_cap, n))
        goto oom;
    for (size_t i = 0; i < n; i++)
        (*flags)[i] = c->train_on_inputs || i >= p;
    return (int)n;
oom:
    snprintf(err, errlen, "out of memory for a record of %zu tokens", n);
    return -1;
}

/* One row set being written: a row a record, or blocks of packed records. */
struct sink {
    struct rowset_writer w;
    int open;
    struct sft_rows_stats *st;
    uint32_t *blk;
    uint8_t *bflag;
    int bn;
};

static int emit(struct sink *k, const uint32_t *tok, const uint8_t *flags, int n, char *err,
                size_t errlen)
{
    int targets = 0;
    for (int i = 1; i < n; i++)
        targets += flags[i] != 0;
    if (!targets) {
        k->st->no_target++;
        return 0;
    }
    k->st->rows++;
    k->st->tokens += n;
    k->st->targets += targets;
    return rowset_writer_add(&k->w, tok, flags, n, err, errlen);
}

/* A record's tokens into the sink; with pack, into blocks of row tokens
 * that overlap by one (a block's last token starts the next, as stream
 * packing's rows do, so that every token but the first is a target once). */
static int sink_add(struct sink *k, const struct sft_rows_cfg *c, const uint32_t *tok,
                    const uint8_t *flags, int n, char *err, size_t errlen)
{
    if (!c->pack)
        return emit(k, tok, flags, n, err, errlen);
    for (int i = 0; i < n; i++) {
        k->blk[k->bn] = tok[i];
        k->bflag[k->bn++] = flags[i];
        if (k->bn == c->row_tokens) {
            if (emit(k, k->blk, k->bflag, k->bn, err, errlen))
                return -1;
            k->blk[0] = k->blk[k->bn - 1];
            k->bflag[0] = 0;
            k->bn = 1;
        }
    }
    return 0;
}

static int sink_open(struct sink *k, const char *path, const struct sft_rows_cfg *c,
                     struct sft_rows_stats *st, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    memset(st, 0, sizeof *st);
    k->st = st;
    k->blk = malloc((size_t)c->row_tokens * sizeof *k->blk);
    k->bflag = malloc((size_t)c->row_tokens);
    if (!k->blk || !k->bflag) {
        snprintf(err, errlen, "out of memory for a row of %d tokens", c->row_tokens);
        return -1;
    }
    if (rowset_writer_open(&k->w, path, c->row_tokens, err, errlen))
        return -1;
    k->open = 1;
    return 0;
}

static int sink_close(struct sink *k, const struct sft_rows_cfg *c, char *err, size_t errlen)
{
    int rc = c->pack && k->bn > 1 ? emit(k, k->blk, k->bflag, k->bn, err, errlen) : 0;
    if (rc == 0)
        rc = rowset_writer_close(&k->w, err, errlen);
    k->open = 0;
    return rc;
}

static void sink_free(struct sink *k)
{
    if (k->open)
        rowset_writer_abort(&k->w);
    free(k->blk);
    free(k->bflag);
    k->blk = NULL;
    k->bflag = NULL;
}

struct maker {
    const struct sft_tokens *t;
    const struct sft_rows_cfg *c;
    struct tok_session *ses;
    struct tok_ids ids;
    uint8_t *flags;
    size_t cap;
    struct sink *train, *val;
    const unsigned char *held;  /* [records]: 1 where a train record is held out */
    int to_val;                 /* the val files: every record is held out */
};

static int on_record(void *arg, const struct sft_record *r, char *err, size_t errlen)
{
    struct maker *m = arg;
    struct sft_text text;
    char why[512];
    if (sft_render(r->obj, &text, why, sizeof why)) {
        snprintf(err, errlen, "%s, line %ld: record %ld %s", r->file, r->line, r->index + 1, why);
        return -1;
    }
    int cut;
    int n = sft_record_tokens(m->t, m->ses, m->c, text.text, text.prompt_len, text.len, &m->ids,
                              &m->flags, &m->cap, &cut, why, sizeof why);
    sft_text_free(&text);
    if (n < 0) {
        snprintf(err, errlen, "%s, line %ld: record %ld: %s", r->file, r->line, r->index + 1, why);
        return -1;
    }
    struct sink *k = m->to_val || (m->held && m->held[r->index]) ? m->val : m->train;
    k->st->records++;
    k->st->cut += cut;
    return sink_add(k, m->c, m->ids.v, m->flags, n, err, errlen);
}

static int count_record(void *arg, const struct sft_record *r, char *err, size_t errlen)
{
    (void)r, (void)err, (void)errlen;
    ++*(long *)arg;
    return 0;
}

struct keyed {
    uint64_t key;
    long index;
};

static int by_key(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The val_size records held out of n: those whose seeded hashes are lowest. */
static unsigned char *held_out(long n, long val_size, char *err, size_t errlen)
{
    struct keyed *k = malloc((size_t)n * sizeof *k);
    unsigned char *held = calloc((size_t)n, 1);
    if (!k || !held) {
        free(k);
        free(held);
        snprintf(err, errlen, "out of memory choosing the held-out records of %ld", n);
        return NULL;
    }
    for (long i = 0; i < n; i++)
        k[i] = (struct keyed){rng_hash(SPLIT_SEED, (uint64_t)i), i};
    qsort(k, (size_t)n, sizeof *k, by_key);
    for (long i = 0; i < val_size; i++)
        held[k[i].index] = 1;
    free(k);
    return held;
}

int sft_make_rows(const struct sft_tokens *t, const struct sft_rows_cfg *c,
                  const char *train_pattern, const char *val_pattern, const char *train_out,
                  const char *val_out, struct sft_rows_stats *train, struct sft_rows_stats *val,
                  char *err, size_t errlen)
{
    struct sink tk = {0}, vk = {0};
    struct maker m = {.t = t, .c = c, .train = &tk, .val = &vk};
    unsigned char *held = NULL;
    int with_val = (val_pattern && val_pattern[0]) || c->val_size > 0, rc = -1;
    memset(val, 0, sizeof *val);
    if (c->val_size > 0) {
        long n = 0;
        if (sft_records_each(train_pattern, "data.train", count_record, &n, err, errlen))
            goto out;
        if (c->val_size >= n) {
            snprintf(err, errlen, "sft.val_size: %ld records held out of the %ld of data.train "
                                  "leave none to train on", c->val_size, n);
            goto out;
        }
        if (!(held = held_out(n, c->val_size, err, errlen)))
            goto out;
        m.held = held;
    }
    if (!(m.ses = tok_session_new(t->tok, err, errlen)) ||
        sink_open(&tk, train_out, c, train, err, errlen) ||
        (with_val && sink_open(&vk, val_out, c, val, err, errlen)) ||
        sft_records_each(train_pattern, "data.train", on_record, &m, err, errlen))
        goto out;
    m.to_val = 1;
    if (val_pattern && val_pattern[0] &&
        sft_records_each(val_pattern, "data.val", on_record, &m, err, errlen))
        goto out;
    if (sink_close(&tk, c, err, errlen) || (with_val && sink_close(&vk, c, err, errlen)))
        goto out;
    rc = 0;
out:
    sink_free(&tk);
    sink_free(&vk);
    free(held);
    free(m.flags);
    tok_ids_free(&m.ids);
    tok_session_free(m.ses);
    return rc;
}
