/* The wait between retries while the server cannot be reached: 0.5 s,
 * doubling to at most 5 s, so a restart is noticed quickly and a long
 * outage is not hammered. The caller keeps *delay (0 to start, and again
 * after a success). */
#ifndef COD_BACKOFF_H
#define COD_BACKOFF_H

static inline double backoff_next(double *delay)
{
    *delay = *delay > 0 ? *delay * 2 : 0.5;
    if (*delay > 5)
        *delay = 5;
    return *delay;
}

#endif
