#include "trainer/schedule.h"

#include <math.h>

double schedule_lr(double peak, long warmup, long steps, double min_lr_ratio, long update)
{
    if (update < warmup)
        return peak * (double)update / (double)warmup;
    long span = steps - 1 - warmup;
    double progress = span > 0 ? (double)(update - warmup) / (double)span : 1.0;
    if (progress > 1)
        progress = 1;
    return peak * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + cos(M_PI * progress)));
}
