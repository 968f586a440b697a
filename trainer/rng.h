/* Deterministic random numbers: xoshiro256** seeded through splitmix64.
 * Every tensor gets its own stream derived from (seed, stream id), so a
 * variant that changes one tensor's init leaves every other tensor as it is
 * and runs with the same seed start from the same weights. */
#ifndef COD_RNG_H
#define COD_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double rng_uniform(struct rng *r);
/* Standard normal (Box–Muller). */
double rng_normal(struct rng *r);
/* A well-mixed 64-bit hash of two words. */
uint64_t rng_hash(uint64_t a, uint64_t b);

#endif
