/* Lease long-polls. A lease request that finds no work is suspended
 * (MHD_suspend_connection) instead of blocking a pool thread; a waker thread
 * resumes every parked request when work may have appeared (a submission,
 * a requeue) or at least every tick, and the handler runs again: it claims,
 * parks again, or answers 204 at its deadline. */
#include "api/handlers.h"

enum MHD_Result longpoll_park(struct req *r)
{
    struct app *app = r->app;
    /* Suspending under the lock the waker takes to resume means the waker
     * can never resume a request that is not yet suspended. */
    pthread_mutex_lock(&app->lock);
    r->next_waiter = app->waiters;
    app->waiters = r;
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
    pthread_mutex_unlock(&app->lock);
    return MHD_YES;
}

void longpoll_wake(struct app *app)
{
    pthread_mutex_lock(&app->lock);
    pthread_cond_signal(&app->wake);
    pthread_mutex_unlock(&app->lock);
}

/* Resumes every parked request; called by the waker with app->lock held. */
void longpoll_resume_all(struct app *app)
{
    for (struct req *r = app->waiters, *next; r; r = next) {
        next = r->next_waiter;
        r->next_waiter = NULL;
        r->suspended = 0;
        MHD_resume_connection(r->conn);
    }
    app->waiters = NULL;
}
