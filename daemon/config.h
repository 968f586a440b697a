/* cod-server's settings: defaults, then a config file, then the
 * environment, then flags, each overriding the one before. */
#ifndef COD_CONFIG_H
#define COD_CONFIG_H

#include <stddef.h>

struct config {
    char host[64];
    int port;
    char db[1024];
    char token[256], worker_token[256];   /* "" when unset */
    char port_file[1024];                 /* where to write the bound port, or "" */
    double lease_s, reap_interval_s, long_poll_max_s, request_deadline_s, grace_s, rendezvous_s;
    double lock_timeout_s;                /* a write's wait for another process's lock */
    size_t max_body;
    int threads, write_threads, readers, max_sweep, max_gang, log_requests, group_commit;
    unsigned conn_limit, per_ip_limit, conn_timeout_s;
};

/* 0 to run; 1 when --help was printed; -1 with err filled (a usage error). */
int config_load(int argc, char **argv, struct config *c, char *err, size_t errlen);
/* Refuses what is unsafe: a non-loopback address without a client token. */
int config_check(const struct config *c, char *err, size_t errlen);
extern const char config_usage[];

#endif
