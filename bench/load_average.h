/* The machine's one-minute load average, which a CPU benchmark prints
 * before it runs: on a shared machine its figures mean little without it. */
#ifndef COD_BENCH_LOAD_AVERAGE_H
#define COD_BENCH_LOAD_AVERAGE_H

#include <stdio.h>

/* -1 where /proc/loadavg cannot be read */
static inline double load_average(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    return load;
}

#endif
