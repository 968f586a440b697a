/* GET /metrics: Prometheus text exposition 0.0.4, and the HTTP counters
 * (requests by route and status, a latency histogram per route) it
 * reports. */
#ifndef COD_PROM_H
#define COD_PROM_H

#include <pthread.h>

#include <jansson.h>

#define PROM_BUCKETS 12
#define PROM_MAX_SERIES 256
#define PROM_MAX_ROUTES 64

struct http_stats {
    pthread_mutex_t lock;
    struct {
        const char *route;   /* a route pattern (static string) */
        int status;
        unsigned long long n;
    } series[PROM_MAX_SERIES];
    int n_series;
    /* per route: a worker's heartbeats and a dashboard's reads have
     * different latencies, which one histogram would blend */
    struct {
        const char *route;
        unsigned long long bucket[PROM_BUCKETS + 1];  /* last: +Inf */
        double sum;
        unsigned long long count;
    } hist[PROM_MAX_ROUTES];
    int n_hist;
};

void prom_init(struct http_stats *h);
void prom_destroy(struct http_stats *h);
void prom_observe(struct http_stats *h, const char *route, int status, double seconds);
/* The whole exposition from the store's counts (views_counts, with the
 * server's parked long-polls as "parked") and the HTTP counters; caller
 * frees. NULL on out-of-memory. */
char *prom_render(struct http_stats *h, json_t *stats);

#endif
