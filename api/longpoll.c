/* Lease long-polls. A lease request that finds no work is suspended
 * (MHD_suspend_connection) instead of blocking a pool thread, and the
 * waker thread (server.c) resumes it, so that its handler runs again
 * (claims, parks again, or answers 204 at its deadline), only when
 *  - work was submitted: as many parked lease polls as there are new jobs
 *    (and one more), of workers that can take them (cpu, cuda), the most
 *    recently parked first, at once; a poll so woken that takes a job
 *    passes the wake on to one more of its kind, in case some woken poll
 *    could not, and one that ends without looking (its pass failed) hands
 *    its wake to another (server.c);
 *  - work may have appeared for anyone in another way (a requeue, a cancel,
 *    a worker gone offline, a gang submitted: its ranks form through the
 *    passes): every parked request, at once, but at most every
 *    LONGPOLL_GAP_S, so that a burst of such events costs one pass over the
 *    parked fleet, not one per event;
 *  - a gang formed: every parked request at once, gap or not (its members
 *    wait to be told, and gangs are few);
 *  - a run's end frees its worker's capacity: that worker's polls, at once;
 *  - its own time comes: its deadline, or store_touch_s after its last pass,
 *    which keeps a waiting worker's last_seen fresh (gangs count the live
 *    workers by it).
 * Between them a parked fleet costs the store nothing: passing every parked
 * poll at a fixed tick cost 10 store jobs per poll per second, most of a
 * core for 5,000 idle workers, and a submission that woke them all cost a
 * pass each (bench/RESULTS.md). A job a woken poll could not take (its
 * worker gone since it parked) is found at the latest by the next poll's
 * own pass, within store_touch_s. */
#include "api/handlers.h"

#include <limits.h>
#include <math.h>

enum MHD_Result longpoll_park(struct req *r)
{
    struct app *app = r->app;
    double t = store_now(), refresh = t + store_touch_s(app->lease_s);
    r->poll_due = r->poll_deadline < refresh ? r->poll_deadline : refresh;
    /* Suspending under the lock the waker takes to resume means the waker
     * can never resume a request that is not yet suspended. */
    pthread_mutex_lock(&app->lock);
    if (r->wakes_seen != app->wakes) /* woken during its pass, before it was here */
        r->poll_due = t;
    r->next_waiter = app->waiters;
    app->waiters = r;
    app->n_waiters++;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    if (r->poll_due < app->next_due) { /* sooner than the waker may sleep */
        app->next_due = r->poll_due;
        pthread_cond_signal(&app->wake);
    }
    pthread_mutex_unlock(&app->lock);
    return MHD_YES;
}

/* With app->lock held: all (1 after the gap, 2 now), or only app->want. */
static void wake(struct app *app, int all)
{
    app->wake_all = all > app->wake_all ? all : app->wake_all;
    app->wakes++;
    pthread_cond_signal(&app->wake);
}

void longpoll_wake(struct app *app)
{
    pthread_mutex_lock(&app->lock);
    wake(app, 1);
    pthread_mutex_unlock(&app->lock);
}

void longpoll_wake_gang(struct app *app)
{
    pthread_mutex_lock(&app->lock);
    wake(app, 2);
    pthread_mutex_unlock(&app->lock);
}

void longpoll_wake_for(struct app *app, enum wake_for kind, int n)
{
    pthread_mutex_lock(&app->lock);
    int *w = &app->want[kind];
    *w = n > INT_MAX - *w ? INT_MAX : *w + n;
    wake(app, 0);
    pthread_mutex_unlock(&app->lock);
}

/* the wake that concerns a poll whose worker takes what takes says (enum
 * lease_takes, not TAKES_NOTHING) */
static enum wake_for kind_of(int takes)
{
    return takes == TAKES_CUDA ? FOR_CUDA : FOR_CPU;
}

void longpoll_pass_on(struct app *app, int takes)
{
    pthread_mutex_lock(&app->lock);
    int *w = &app->want[kind_of(takes)];
    if (*w < 1)
        *w = 1;
    wake(app, 0);
    pthread_mutex_unlock(&app->lock);
}

void longpoll_hand_on(struct app *app, int takes)
{
    longpoll_wake_for(app, kind_of(takes), 1);
}

int longpoll_wanted(const struct app *app)
{
    return app->want[FOR_CPU] || app->want[FOR_CUDA] || app->want[FOR_ANY];
}

static void resume(struct req *r)
{
    r->app->n_waiters--;
    r->next_waiter = NULL;
    r->suspended = 0;
    MHD_resume_connection(r->conn);
}

void longpoll_resume_all(struct app *app)
{
    for (struct req *r = app->waiters, *next; r; r = next) {
        next = r->next_waiter;
        app->resumed_for_work++;
        resume(r);
    }
    app->waiters = NULL;
    app->next_due = INFINITY;
    app->want[FOR_CPU] = app->want[FOR_CUDA] = app->want[FOR_ANY] = 0;
}

void longpoll_resume_wanted(struct app *app)
{
    int *w = app->want;
    for (struct req **p = &app->waiters; *p && longpoll_wanted(app);) {
        struct req *r = *p;
        int k = !r->poll_worker || r->poll_takes == TAKES_NOTHING ? -1
                                                                  : (int)kind_of(r->poll_takes);
        if (k >= 0 && (w[k] > 0 || w[FOR_ANY] > 0)) {
            w[w[k] > 0 ? k : FOR_ANY]--;
            *p = r->next_waiter;
            r->poll_for_work = 1;
            app->resumed_for_work++;
            resume(r);
        } else {
            p = &r->next_waiter;
        }
    }
    /* what no parked poll could take waits for the next request's own pass */
    w[FOR_CPU] = w[FOR_CUDA] = w[FOR_ANY] = 0;
}

void longpoll_pass_begins(struct req *r)
{
    pthread_mutex_lock(&r->app->lock);
    r->wakes_seen = r->app->wakes;
    pthread_mutex_unlock(&r->app->lock);
}

/* Resumes the parked requests of worker, or (worker 0) those due by now;
 * returns the soonest due of the others. */
static double resume_some(struct app *app, double now, int64_t worker)
{
    double soonest = INFINITY;
    for (struct req **p = &app->waiters; *p;) {
        struct req *r = *p;
        if (worker ? r->poll_worker == worker : r->poll_due <= now) {
            *p = r->next_waiter;
            app->resumed_for_work += worker != 0;
            resume(r);
        } else {
            soonest = r->poll_due < soonest ? r->poll_due : soonest;
            p = &r->next_waiter;
        }
    }
    return soonest;
}

void longpoll_wake_worker(struct app *app, int64_t worker)
{
    pthread_mutex_lock(&app->lock);
    app->wakes++;
    resume_some(app, 0, worker);
    pthread_mutex_unlock(&app->lock);
}

double longpoll_resume_due(struct app *app, double now)
{
    return resume_some(app, now, 0);
}
