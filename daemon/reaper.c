/* Reaper thread. */
#include "daemon/reaper.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/handlers.h"
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
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        pthread_mutex_unlock(&r->lock);
        int expired;
        if (store_reap(r->app->store, r->app->rendezvous_s, &expired) == ST_OK && expired) {
            fprintf(stderr, "cod-server: reaper: %d lapsed lease%s requeued or failed\n", expired,
                    expired == 1 ? "" : "s");
            longpoll_wake(r->app);
        }
        if (watchdog > 0)
            notify_send("WATCHDOG=1");
        pthread_mutex_lock(&r->lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + tick;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
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
