/* DIR/metrics.jsonl: one JSON object per line, {"step", "name", "value"}
 * and "layer" for per-layer values. A non-finite value is written as null
 * (JSON has no NaN). Lines are flushed as written, so a killed run keeps
 * everything up to its last line. */
#ifndef COD_METRICS_LOG_H
#define COD_METRICS_LOG_H

#include <stdio.h>

struct metrics_log {
    FILE *f;
    char path[4096];
    int err; /* the errno of the first write that failed; 0 while none has */
};

/* Opens DIR/metrics.jsonl for appending. With keep_through_step >= 0 it
 * first drops every line of a later step (a resumed run rewrites them);
 * with -1 it starts the file afresh. */
int metrics_log_open(struct metrics_log *ml, const char *dir, long keep_through_step, char *err,
                     size_t errlen);
/* layer < 0 for a scalar. 0, or -1 once a write has failed (a full disk):
 * nothing more is written after it, so the file ends at most with one torn
 * line, which a resume drops; ml->err says why. */
int metrics_log_write(struct metrics_log *ml, long step, const char *name, int layer, double value);
void metrics_log_close(struct metrics_log *ml);

#endif
