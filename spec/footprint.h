/* What a spec's model costs to train, from the spec alone: its parameters
 * and a lower bound of the memory a rank holds at its micro-batch, so that
 * a server can refuse a model no GPU holds (docs/spec.md, "Size") before a
 * worker leases it and fails at allocation. In doubles: a dim of 2^31
 * squared overflows any integer. */
#ifndef COD_SPEC_FOOTPRINT_H
#define COD_SPEC_FOOTPRINT_H

#include "spec/spec.h"

struct footprint {
    double params;  /* with the vocabulary as known (2 while it is not) */
    double bytes;   /* at least: weights, gradients and Adam's moments (16 bytes a
                       parameter, 10 in bf16 precision), and each block's
                       activations at train.micro_batch x seq_len, 2 bytes a value */
};

void spec_footprint(const struct job_spec *s, struct footprint *out);

#endif
