/* The learning-rate schedule of the recipe (docs/spec.md): linear warmup
 * from 0, then cosine from the peak down to min_lr_ratio·peak, reached
 * exactly at the last update. Updates are numbered from 0. */
#ifndef COD_SCHEDULE_H
#define COD_SCHEDULE_H

double schedule_lr(double peak, long warmup, long steps, double min_lr_ratio, long update);

#endif
