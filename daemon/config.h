/* cod-server's settings: defaults, then a config file, then the
 * environment, then flags, each overriding the one before. */
#ifndef COD_CONFIG_H
#define COD_CONFIG_H

#include <stddef.h>

enum { CONFIG_MAX_ROOTS = 16 };

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
    double header_deadline_s;             /* accepted to headers in (api/conn_guard.h) */
    char allowed_hosts[1024];             /* names Host may say, comma-separated */
    char data_roots[CONFIG_MAX_ROOTS][1024]; /* where submitted data may lie */
    int n_data_roots;
    int max_data_files, max_sweep_axes;
    double max_model_gib;                 /* a model's memory at its batch, at most */
    /* which layer (1 file, 2 environment, 3 flags) last set each list: a
     * layer's values replace an earlier layer's, and add to its own */
    int layer, hosts_layer, roots_layer;
};

/* 0 to run; 1 when --help was printed; -1 with err filled (a usage error). */
int config_load(int argc, char **argv, struct config *c, char *err, size_t errlen);
/* Refuses what is unsafe: a non-loopback address without a client token. */
int config_check(const struct config *c, char *err, size_t errlen);
extern const char config_usage[];

#endif
