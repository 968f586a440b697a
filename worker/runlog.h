/* A worker's log lines: each goes to stdout (for journald) with the
 * experiment it concerns and, while a run is on, to that run's log file,
 * which the reporter sends to the server. Safe from any thread. */
#ifndef COD_RUNLOG_H
#define COD_RUNLOG_H

#include <stdint.h>
#include <stdio.h>

/* Opens (appending) the log file of one run; path NULL for a log that goes
 * to stdout only. 0, or -1 with err. */
int runlog_open(const char *path, int64_t experiment, char *err, size_t errlen);
void runlog_close(void);
void runlog_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds since the epoch, to the microsecond. */
double runlog_now(void);

#endif
