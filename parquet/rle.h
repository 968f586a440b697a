/* Parquet's RLE / bit-packed hybrid: the definition and repetition levels,
 * dictionary indices and RLE booleans. Runs are read one value at a time
 * with every byte bounds-checked; a bit-packed run cut short at the end of
 * its buffer yields the values whose bits are there (writers may leave off
 * the padding of the last group) and then stops. */
#ifndef COD_PARQUET_RLE_H
#define COD_PARQUET_RLE_H

#include <stddef.h>
#include <stdint.h>

struct rle {
    const uint8_t *p, *end;
    int bw;            /* bits a value, 0 to 32 */
    uint64_t left;     /* values left in the current run */
    int packed;        /* the run is bit-packed (else repeated) */
    uint32_t value;    /* a repeated run's value */
    const uint8_t *bp; /* a bit-packed run's first byte */
    uint64_t bit;      /* the next value's first bit in it */
    uint64_t bits;     /* the bits there are in it */
};

void rle_init(struct rle *r, const uint8_t *p, size_t n, int bw);
/* The next value: 0, or -1 when the runs are spent or malformed. */
int rle_next(struct rle *r, uint32_t *v);
/* Bits a value needs for values up to max: 0 for 0, 1 for 1, 2 for 2..3, ... */
int rle_width(uint32_t max);

#endif
