/* The full check of a job spec's data, before a run starts: the cheap
 * checks of spec/data.h, and, for data without meta.json, a scan of every
 * token for the largest id, which gives model.vocab when the spec leaves it
 * out and must lie inside it when it does not. The worker and cod-train run
 * it; cod-server does not (it reads no token). */
#ifndef COD_DATA_CHECK_H
#define COD_DATA_CHECK_H

#include "spec/spec.h"

/* 0 with model.vocab known, or -1 with *err naming the field. */
int spec_check_data(struct job_spec *s, struct spec_error *err);

#endif
