#include "eval/pyrandom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 624, M = 397 };

static void init_genrand(struct py_random *r, uint32_t s)
{
    r->mt[0] = s;
    for (int i = 1; i < N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->i = N;
}

/* the reference init_by_array, which CPython's seed() calls with the
 * integer's 32-bit words, least significant first */
void py_random_seed(struct py_random *r, uint64_t seed)
{
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    int len = key[1] ? 2 : 1;
    init_genrand(r, 19650218u);
    int i = 1, j = 0;
    for (int k = N > len ? N : len; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] +
                   (uint32_t)j;
        i++;
        j++;
        if (i >= N) {
            r->mt[0] = r->mt[N - 1];
            i = 1;
        }
        if (j >= len)
            j = 0;
    }
    for (int k = N - 1; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) -
                   (uint32_t)i;
        i++;
        if (i >= N) {
            r->mt[0] = r->mt[N - 1];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
    r->i = N;
}

static uint32_t genrand(struct py_random *r)
{
    if (r->i >= N) {
        for (int k = 0; k < N; k++) {
            uint32_t y = (r->mt[k] & 0x80000000u) | (r->mt[(k + 1) % N] & 0x7fffffffu);
            r->mt[k] = r->mt[(k + M) % N] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfu : 0);
        }
        r->i = 0;
    }
    uint32_t y = r->mt[r->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

uint32_t py_random_bits(struct py_random *r, int k)
{
    return genrand(r) >> (32 - k);
}

uint32_t py_random_below(struct py_random *r, uint32_t n)
{
    int k = 0;
    while (k < 32 && (n >> k))
        k++;
    uint32_t v = py_random_bits(r, k);
    while (v >= n)
        v = py_random_bits(r, k);
    return v;
}

int py_random_sample(struct py_random *r, int n, int k, int *out)
{
    if (k < 0 || k > n)
        return -1;
    int setsize = 21;
    if (k > 5)
        setsize += (int)pow(4, ceil(log(k * 3.0) / log(4.0)));
    if (n <= setsize) {
        int *pool = malloc((size_t)n * sizeof(int) + 1);
        if (!pool)
            return -1;
        for (int i = 0; i < n; i++)
            pool[i] = i;
        for (int i = 0; i < k; i++) {
            int j = (int)py_random_below(r, (uint32_t)(n - i));
            out[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
        free(pool);
        return 0;
    }
    unsigned char *taken = calloc((size_t)n, 1);
    if (!taken)
        return -1;
    for (int i = 0; i < k; i++) {
        int j = (int)py_random_below(r, (uint32_t)n);
        while (taken[j])
            j = (int)py_random_below(r, (uint32_t)n);
        taken[j] = 1;
        out[i] = j;
    }
    free(taken);
    return 0;
}
