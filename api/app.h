/* What the HTTP layer needs from the daemon: settings, the store, and the
 * shared state of the running server (stop flag, long-poll waiters, stats). */
#ifndef COD_APP_H
#define COD_APP_H

#include <pthread.h>
#include <stddef.h>

#include "api/prom.h"
#include "api/submit.h"
#include "schema/store.h"

struct req;
struct conn_guard;

struct app {
    /* settings */
    const char *token, *worker_token;   /* NULL: open */
    double lease_s;                      /* lease length; heartbeats extend it */
    double long_poll_max_s;              /* longest lease wait a worker may ask for */
    double request_deadline_s;           /* whole request, upload included */
    const char *allowed_hosts;           /* names Host may say, comma-separated (browser.h) */
    size_t max_body;
    struct submit_rules submit;          /* what a submission may ask (submit.h) */
    double rendezvous_s;                 /* how long a new gang has to meet */
    int log_requests;
    struct store *store;
    /* running state */
    volatile int stopping;
    pthread_mutex_t lock;                /* guards waiters and inflight */
    pthread_cond_t wake;                 /* the waker has long-polls to resume */
    int wake_all;                        /* every parked poll to resume: work may have
                                            appeared for anyone (1, after the gap), or a
                                            gang formed (2: now) */
    int want[3];                         /* parked lease polls to resume now for new
                                            work, by enum wake_for (longpoll.c) */
    long resumed_for_work;               /* parked polls resumed by wakes, not their time */
    long wakes;                          /* wakes of any kind so far: what a poll's pass may miss */
    double next_due;                     /* the soonest poll_due of the waiters (INFINITY: none) */
    pthread_cond_t idle;                 /* a request ended: api_stop counts them down */
    struct req *waiters;                 /* suspended long-polls (leases, rendezvous) */
    int n_waiters;
    struct writes *writes;               /* the writing routes' threads (writes.h) */
    struct conn_guard *guard;            /* connections before their headers (conn_guard.h) */
    int inflight;
    int store_pending;                   /* leases the store is yet to answer */
    struct http_stats stats;
};

#endif
