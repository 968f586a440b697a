#include "trainer/dataloader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/rng.h"

int loader_open(struct loader *l, const char *pattern, int T, uint64_t seed, char *err,
                size_t errlen)
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
    if (!l->shards || !l->first_chunk) {
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
        l->n_tokens += l->shards[i].n_tokens;
    }
    shard_free_paths(paths, n);
    l->n_chunks = l->first_chunk[n];
    if (l->n_chunks == 0) {
        snprintf(err, errlen, "%s: the shards hold %lld tokens, fewer than one sequence of %d + 1",
                 pattern, (long long)l->n_tokens, T);
        loader_close(l);
        return -1;
    }
    return 0;
}

void loader_close(struct loader *l)
{
    for (int i = 0; i < l->n_shards; i++)
        shard_close(&l->shards[i]);
    free(l->shards);
    free(l->first_chunk);
    memset(l, 0, sizeof(*l));
}

void loader_chunk(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt)
{
    int lo = 0, hi = l->n_shards - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (l->first_chunk[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    const struct shard *s = &l->shards[lo];
    int64_t start = (k - l->first_chunk[lo]) * l->T;
    for (int t = 0; t < l->T; t++) {
        tok[t] = (int32_t)shard_token(s, start + t);
        tgt[t] = (int32_t)shard_token(s, start + t + 1);
    }
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

void loader_sample(const struct loader *l, int64_t i, int32_t *tok, int32_t *tgt)
{
    uint64_t n = (uint64_t)l->n_chunks;
    loader_chunk(l, permute(l->seed, (uint64_t)i / n, (uint64_t)i % n, n), tok, tgt);
}

uint32_t loader_max_token(const struct loader *l)
{
    uint32_t mx = 0;
    for (int i = 0; i < l->n_shards; i++)
        for (int64_t t = 0; t < l->shards[i].n_tokens; t++) {
            uint32_t v = shard_token(&l->shards[i], t);
            mx = v > mx ? v : mx;
        }
    return mx;
}
