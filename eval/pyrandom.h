/* Python's random.Random, as far as the harness's few-shot sampler uses it
 * (random.Random(seed).sample(population, k)): the Mersenne Twister with
 * Python's seeding of an integer, getrandbits, _randbelow and sample's two
 * methods, so that a seed draws the harness's examples. */
#ifndef COD_EVAL_PYRANDOM_H
#define COD_EVAL_PYRANDOM_H

#include <stdint.h>

struct py_random {
    uint32_t mt[624];
    int i;
};

/* random.Random(seed) */
void py_random_seed(struct py_random *r, uint64_t seed);
/* getrandbits(k), 1 ≤ k ≤ 32 */
uint32_t py_random_bits(struct py_random *r, int k);
/* _randbelow(n), n ≥ 1 */
uint32_t py_random_below(struct py_random *r, uint32_t n);
/* random.sample(range(n), k) into out[k]: 0, or -1 when k > n or out of memory. */
int py_random_sample(struct py_random *r, int n, int k, int *out);

#endif
