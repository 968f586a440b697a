/* cod-worker's settings: its command line over the environment
 * (COD_SERVER, COD_WORKER_TOKEN, else COD_TOKEN) over the defaults. */
#ifndef COD_WORKER_ARGS_H
#define COD_WORKER_ARGS_H

#include <stdio.h>

struct worker_args {
    const char *server, *token, *device, *work_dir, *name; /* name NULL: host/device/pid */
    const char *host;     /* NULL: the machine's host name */
    int nccl_always;      /* --nccl always: a one-GPU run through NCCL too */
    int threads;          /* 0: OpenMP's default */
    long max_jobs;        /* 0: until stopped */
    double wait, heartbeat_s, flush_s;
};

/* 0 with *a filled, 1 when --help was asked (usage printed on stdout), or
 * 2 on bad usage (said on stderr, with the usage). */
int worker_args_parse(int argc, char **argv, struct worker_args *a);
void worker_usage(FILE *f);

#endif
