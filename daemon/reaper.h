/* The reaper: a thread that sends lapsed leases back to the queue (or to
 * failed), wakes lease long-polls when it did, and pings systemd's watchdog. */
#ifndef COD_REAPER_H
#define COD_REAPER_H

#include "api/app.h"

struct reaper;

int reaper_start(struct app *app, double interval_s, struct reaper **out);
void reaper_stop(struct reaper *r);

#endif
