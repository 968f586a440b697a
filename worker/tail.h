/* Reading a growing line file from where the last read stopped: the worker
 * sends RUN/metrics.jsonl and the run's log to the server from the files
 * themselves, so what is not yet acknowledged is always on disk. Only whole
 * lines are returned; a line being written is left for the next read. */
#ifndef COD_TAIL_H
#define COD_TAIL_H

#include <stddef.h>

struct tail {
    char path[4096];
    long offset;    /* bytes acknowledged so far */
    long lines;     /* whole lines acknowledged so far */
};

/* 0, or -1 with err when path does not fit. */
int tail_init(struct tail *t, const char *path, char *err, size_t errlen);

/* Up to max_lines whole lines after t->offset, concatenated in *buf (each
 * with its '\n'); *n_lines and *n_bytes say how many. A missing file reads
 * as empty. 0, or -1 with err. The caller frees *buf and, once the lines
 * are acknowledged, calls tail_advance. */
int tail_read(const struct tail *t, int max_lines, char **buf, int *n_lines, long *n_bytes,
              char *err, size_t errlen);
void tail_advance(struct tail *t, int n_lines, long n_bytes);
/* How many whole lines the file at path holds: 0 when it is missing, -1
 * when it cannot be read. */
long tail_count_lines(const char *path);

#endif
