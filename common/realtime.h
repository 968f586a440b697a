/* Deadlines for pthread_cond_timedwait, which takes an instant of
 * CLOCK_REALTIME as a struct timespec: the one conversion every waiting
 * thread needs (the server's waker, its stop, the reaper, the worker's
 * reporter). */
#ifndef COD_REALTIME_H
#define COD_REALTIME_H

#include <time.h>

/* The CLOCK_REALTIME instant seconds from now (now itself for seconds <= 0). */
struct timespec realtime_after(double seconds);

#endif
