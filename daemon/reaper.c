/* Reaper thread: lapsed leases every --reap-seconds, and between them the
 * heartbeats noted in memory, every BEATS_FLUSH_S when nothing else wrote
 * them (schema/beats.c). */
#include "daemon/reaper.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/handlers.h"
#include "common/realtime.h"
#include "daemon/notify.h"

struct reaper {
    struct app *app;
    double interval;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
};

static void *loop(void *arg)
{
    struct reaper *r = arg;
    double watchdog = notify_watchdog_interval();
    double tick = watchdog > 0 && watchdog < r->interval ? watchdog : r->interval;
    if (tick > BEATS_FLUSH_S)
        tick = BEATS_FLUSH_S;
    double reaped = 0, notified = 0;
    int flush_failing = 0;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        pthread_mutex_unlock(&r->lock);
        double t = store_now();
        int expired;
        if (t - reaped >= r->interval) {
            reaped = t;
            if (store_reap(r->app->store, r->app->rendezvous_s, &expired) == ST_OK && expired) {
                fprintf(stderr, "cod-server: reaper: %d lapsed lease%s requeued or failed\n",
                        expired, expired == 1 ? "" : "s");
                longpoll_wake(r->app);
            }
        } else {
            /* said once, not ten times a second, while the disk is failing */
            int ok = store_flush_beats(r->app->store) == ST_OK;
            if (!ok && !flush_failing)
                fprintf(stderr, "cod-server: reaper: the heartbeats noted could not be written;"
                                " kept to try again\n");
            flush_failing = !ok;
        }
        if (watchdog > 0 && t - notified >= watchdog) {
            notified = t;
            notify_send("WATCHDOG=1");
        }
        pthread_mutex_lock(&r->lock);
        struct timespec ts = realtime_after(tick);
        if (!r->stop)
            pthread_cond_timedwait(&r->cond, &r->lock, &ts);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int reaper_start(struct app *app, double interval_s, struct reaper **out)
{
    struct reaper *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->app = app;
    r->interval = interval_s;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    if (pthread_create(&r->thread, NULL, loop, r) != 0) {
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->cond);
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void reaper_stop(struct reaper *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r);
}
