#include "trainer/schedule.h"

#include <math.h>

double schedule_lr(enum schedule kind, double peak, long warmup, long steps, double min_lr_ratio,
                   long update)
{
    if (update < warmup)
        return peak * (double)update / (double)warmup;
    if (kind == SCHEDULE_LINEAR) {
        double left = steps > warmup ? (double)(steps - update) / (double)(steps - warmup) : 0;
        return peak * (min_lr_ratio + (1 - min_lr_ratio) * (left > 0 ? left : 0));
    }
    long span = steps - 1 - warmup;
    double progress = span > 0 ? (double)(update - warmup) / (double)span : 1.0;
    if (progress > 1)
        progress = 1;
    return peak * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + cos(M_PI * progress)));
}
