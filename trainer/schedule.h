/* The learning-rate schedule of the recipe (docs/spec.md): linear warmup
 * from 0, then cosine from the peak down to min_lr_ratio·peak, reached
 * exactly at the last update; or, linear, down towards min_lr_ratio·peak
 * reached one update after the last, as Hugging Face's Trainer decays
 * (its get_linear_schedule_with_warmup when the ratio is 0). Updates are
 * numbered from 0. */
#ifndef COD_SCHEDULE_H
#define COD_SCHEDULE_H

#include "spec/spec.h"

double schedule_lr(enum schedule kind, double peak, long warmup, long steps, double min_lr_ratio,
                   long update);

#endif
