/* DIR/metrics.jsonl: one JSON object per line, {"step", "name", "value"}
 * and "layer" for per-layer values. A non-finite value is written as null
 * (JSON has no NaN). Lines are flushed as written, so a killed run keeps
 * everything up to its last line. */
#ifndef COD_METRICS_LOG_H
#define COD_METRICS_LOG_H

#include <stdio.h>

struct metrics_log {
    FILE *f;
};

/* Opens DIR/metrics.jsonl for appending. With keep_through_step >= 0 it
 * first drops every line of a later step (a resumed run rewrites them);
 * with -1 it starts the file afresh. */
int metrics_log_open(struct metrics_log *ml, const char *dir, long keep_through_step, char *err,
                     size_t errlen);
/* layer < 0 for a scalar */
void metrics_log_write(struct metrics_log *ml, long step, const char *name, int layer, double value);
void metrics_log_close(struct metrics_log *ml);

#endif
