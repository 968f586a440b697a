#include "trainer/dataloader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/data.h"
#include "trainer/rng.h"

/* The shard whose range of a prefix sum over the shards (first[i], the
 * count before shard i) holds k. */
static int shard_holding(const struct loader *l, const int64_t *first, int64_t k)
{
    int lo = 0, hi = l->n_shards - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (first[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int add_doc(struct loader *l, size_t *cap, int64_t start, int64_t len)
{
    if (len < 2)
        return 0;
    if ((size_t)l->n_chunks == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        int64_t *st = realloc(l->doc_start, c * sizeof(int64_t));
        if (st)
            l->doc_start = st;
        int32_t *ln = st ? realloc(l->doc_len, c * sizeof(int32_t)) : NULL;
        if (!ln)
            return -1;
        l->doc_len = ln;
        *cap = c;
    }
    l->doc_start[l->n_chunks] = start;
    l->doc_len[l->n_chunks++] = (int32_t)(len < l->T + 1 ? len : l->T + 1);
    return 0;
}

/* One pass over every token for the documents: a doc token opens one (or,
 * at_end, closes one); what precedes the first (follows the last) is a
 * fragment whose start (end) another set holds, and no document. */
static int index_documents(struct loader *l, const struct loader_docs *d, const char *pattern,
                           char *err, size_t errlen)
{
    size_t cap = 0;
    int64_t start = d->at_end ? 0 : -1, g = 0;
    for (int i = 0; i < l->n_shards; i++)
        for (int64_t t = 0; t < l->shards[i].n_tokens; t++, g++) {
            if (shard_token(&l->shards[i], t) != d->doc_token)
                continue;
            if (d->at_end) {
                if (add_doc(l, &cap, start, g + 1 - start))
                    goto oom;
                start = g + 1;
            } else {
                if (start >= 0 && add_doc(l, &cap, start, g - start))
                    goto oom;
                start = g;
            }
        }
    if (!d->at_end && start >= 0 && add_doc(l, &cap, start, g - start))
        goto oom;
    if (l->n_chunks == 0) {
        snprintf(err, errlen,
                 "%s: no document boundary in the shards: no document of 2 tokens or more %s "
                 "doc token %u (data.packing \"documents\")",
                 pattern, d->at_end ? "ended by" : "starting at", d->doc_token);
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory indexing the documents of %s", pattern);
    return -1;
}

int loader_open(struct loader *l, const char *pattern, int T, uint64_t seed,
                const struct loader_docs *docs, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    l->T = T;
    l->seed = seed;
    char **paths;
    int n;
    if (shard_glob(pattern, &paths, &n, err, errlen))
        return -1;
    l->shards = calloc((size_t)n, sizeof(struct shard));
    l->first_chunk = calloc((size_t)n + 1, sizeof(int64_t));
    l->first_token = calloc((size_t)n + 1, sizeof(int64_t));
    if (!l->shards || !l->first_chunk || !l->first_token) {
        snprintf(err, errlen, "out of memory opening %d shards", n);
        shard_free_paths(paths, n);
        loader_close(l);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (shard_open(&l->shards[i], paths[i], err, errlen)) {
            shard_free_paths(paths, n);
            loader_close(l);
            return -1;
        }
        l->n_shards = i + 1;
        l->first_chunk[i + 1] = l->first_chunk[i] + (l->shards[i].n_tokens - 1) / T;
        l->first_token[i + 1] = l->first_token[i] + l->shards[i].n_tokens;
        l->n_tokens += l->shards[i].n_tokens;
    }
    shard_free_paths(paths, n);
    if (docs) {
        l->documents = l->partial = 1;
        l->pad = docs->pad;
        if (index_documents(l, docs, pattern, err, errlen)) {
            loader_close(l);
            return -1;
        }
        return 0;
    }
    l->n_chunks = l->first_chunk[n];
    if (l->n_chunks == 0) {
        snprintf(err, errlen, "%s: the shards hold %lld tokens, fewer than one sequence of %d + 1",
                 pattern, (long long)l->n_tokens, T);
        loader_close(l);
        return -1;
    }
    return 0;
}

int loader_open_spec(struct loader *l, const struct job_spec *s, const char *pattern,
                     const char *field, char *err, size_t errlen)
{
    int T = s->train.seq_len;
    if (s->packing != PACKING_DOCUMENTS)
        return loader_open(l, pattern, T, s->train.seed, NULL, err, errlen);
    struct data_docs d;
    struct spec_error se;
    if (spec_data_docs(pattern, field, &d, &se)) {
        snprintf(err, errlen, "%s: %s", se.field, se.message);
        return -1;
    }
    if (!d.known) {
        snprintf(err, errlen, "%s: data.packing \"documents\" needs the shards' document "
                 "boundaries: %s", field, d.missing);
        return -1;
    }
    /* without a pad id, any id will do: a padded position's target is left out */
    struct loader_docs docs = {d.doc_token, d.at_end, d.has_pad ? d.pad_token : d.doc_token};
    return loader_open(l, pattern, T, s->train.seed, &docs, err, errlen);
}

int loader_open_rows(struct loader *l, const char *path, int T, uint64_t seed, uint32_t pad,
                     char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    if (rowset_open(&l->rows, path, err, errlen))
        return -1;
    if (l->rows.row_tokens > T + 1 || l->rows.n_rows == 0) {
        snprintf(err, errlen, "%s: %s", path,
                 l->rows.n_rows ? "rows longer than seq_len + 1 tokens" : "no row");
        rowset_close(&l->rows);
        return -1;
    }
    l->T = T;
    l->seed = seed;
    l->pad = pad;
    l->partial = 1;
    l->n_chunks = l->rows.n_rows;
    l->n_tokens = l->rows.n_tokens;
    return 0;
}

void loader_close(struct loader *l)
{
    rowset_close(&l->rows);
    for (int i = 0; i < l->n_shards; i++)
        shard_close(&l->shards[i]);
    free(l->shards);
    free(l->first_chunk);
    free(l->first_token);
    free(l->doc_start);
    free(l->doc_len);
    memset(l, 0, sizeof(*l));
}

static int document_row(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt)
{
    int n = l->doc_len[k], T = l->T;
    int sh = shard_holding(l, l->first_token, l->doc_start[k]);
    int64_t at = l->doc_start[k] - l->first_token[sh];
    for (int t = 0; t < n; t++, at++) {
        while (at >= l->shards[sh].n_tokens) {
            at -= l->shards[sh].n_tokens;
            sh++;
        }
        int32_t x = (int32_t)shard_token(&l->shards[sh], at);
        if (t < T)
            tok[t] = x;
        if (t > 0)
            tgt[t - 1] = x;
    }
    for (int t = n; t < T; t++)
        tok[t] = (int32_t)l->pad;
    for (int t = n - 1; t < T; t++)
        tgt[t] = -1;
    return n - 1;
}

/* Row k of a row set: its tokens in, each next token out where it is a target. */
static int rowset_row(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt)
{
    int n = (int)l->rows.index[k].len, T = l->T;
    const uint32_t *x = rowset_tokens(&l->rows, k);
    const uint8_t *f = rowset_flags(&l->rows, k);
    for (int t = 0; t + 1 < n; t++) {
        tok[t] = (int32_t)x[t];
        tgt[t] = f[t + 1] ? (int32_t)x[t + 1] : -1;
    }
    for (int t = n - 1; t < T; t++) {
        tok[t] = (int32_t)l->pad;
        tgt[t] = -1;
    }
    return (int)l->rows.index[k].targets;
}

int loader_chunk(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt)
{
    if (l->rows.map)
        return rowset_row(l, k, tok, tgt);
    if (l->documents)
        return document_row(l, k, tok, tgt);
    int lo = shard_holding(l, l->first_chunk, k);
    const struct shard *s = &l->shards[lo];
    int64_t start = (k - l->first_chunk[lo]) * l->T;
    for (int t = 0; t < l->T; t++) {
        tok[t] = (int32_t)shard_token(s, start + t);
        tgt[t] = (int32_t)shard_token(s, start + t + 1);
    }
    return l->T;
}

void loader_rows(const struct loader *l, int64_t first, int n, int32_t *tok, int32_t *tgt)
{
    for (int b = 0; b < n; b++)
        loader_chunk(l, first + b, tok + (size_t)b * l->T, tgt + (size_t)b * l->T);
}

int loader_targets(const struct loader *l, int64_t k)
{
    if (l->rows.map)
        return (int)l->rows.index[k].targets;
    return l->documents ? l->doc_len[k] - 1 : l->T;
}

int loader_inputs(const struct loader *l, int64_t k)
{
    if (l->rows.map)
        return (int)l->rows.index[k].len - 1;
    return loader_targets(l, k);
}

int64_t loader_rows_for(const struct loader *l, int64_t tokens)
{
    if (!l->partial) {
        int64_t rows = (tokens + l->T - 1) / l->T;
        return rows < l->n_chunks ? rows : l->n_chunks;
    }
    int64_t k = 0, sum = 0;
    while (k < l->n_chunks && sum < tokens)
        sum += loader_targets(l, k++);
    return k;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A seeded bijection of [0, n) per epoch: an affine map a·k + b mod n with
 * a coprime to n, applied twice with independent constants so that
 * neighbouring k do not land at a fixed stride. */
static int64_t permute(uint64_t seed, uint64_t epoch, uint64_t k, uint64_t n)
{
    for (int round = 0; round < 2; round++) {
        uint64_t h = rng_hash(seed, epoch * 2 + (uint64_t)round);
        uint64_t a = n > 1 ? 1 + h % (n - 1) : 1, b = rng_hash(h, 1) % n;
        while (gcd(a, n) != 1)
            a++;
        k = (uint64_t)(((unsigned __int128)a * k + b) % n);
    }
    return (int64_t)k;
}

int64_t loader_sample_row(const struct loader *l, int64_t i)
{
    uint64_t n = (uint64_t)l->n_chunks;
    return permute(l->seed, (uint64_t)i / n, (uint64_t)i % n, n);
}

int loader_sample(const struct loader *l, int64_t i, int32_t *tok, int32_t *tgt)
{
    return loader_chunk(l, loader_sample_row(l, i), tok, tgt);
}

uint32_t loader_max_token(const struct loader *l)
{
    uint32_t mx = 0;
    for (int64_t k = 0; l->rows.map && k < l->rows.n_rows; k++)
        for (uint32_t t = 0; t < l->rows.index[k].len; t++)
            mx = rowset_tokens(&l->rows, k)[t] > mx ? rowset_tokens(&l->rows, k)[t] : mx;
    for (int i = 0; i < l->n_shards; i++)
        for (int64_t t = 0; t < l->shards[i].n_tokens; t++) {
            uint32_t v = shard_token(&l->shards[i], t);
            mx = v > mx ? v : mx;
        }
    return mx;
}
