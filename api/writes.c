/* The writes' threads (writes.h): a queue of suspended requests, taken in
 * order by whichever thread is free. */
#include "api/writes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct writes {
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct req *head, *tail;
    int stopping;
    int n;
    pthread_t th[];
};

static void *loop(void *arg)
{
    struct writes *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stopping)
            pthread_cond_wait(&w->more, &w->lock);
        struct req *r = w->head;
        if (!r)
            break;
        w->head = r->next_job;
        if (!w->head)
            w->tail = NULL;
        pthread_mutex_unlock(&w->lock);
        if (r->job(r, r->job_id) == MHD_NO && !r->answer)
            r->close = 1;
        /* its answer is kept in r, which belongs to libmicrohttpd again */
        r->deferred = 0;
        MHD_resume_connection(r->conn);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int writes_start(int n, struct writes **out, char *err, size_t errlen)
{
    struct writes *w = calloc(1, sizeof *w + (size_t)n * sizeof w->th[0]);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->more, NULL);
    for (; w->n < n; w->n++)
        if (pthread_create(&w->th[w->n], NULL, loop, w) != 0) {
            snprintf(err, errlen, "cannot start write thread %d of %d", w->n + 1, n);
            writes_stop(w);
            writes_free(w);
            return -1;
        }
    *out = w;
    return 0;
}

enum MHD_Result writes_defer(struct writes *w, struct req *r, handler_fn fn, int64_t id)
{
    if (w) {
        pthread_mutex_lock(&w->lock);
        if (!w->stopping) {
            r->job = fn;
            r->job_id = id;
            r->next_job = NULL;
            r->deferred = 1;
            /* suspended before any thread can see it, so that its resume
             * never comes first */
            MHD_suspend_connection(r->conn);
            if (w->tail)
                w->tail->next_job = r;
            else
                w->head = r;
            w->tail = r;
            pthread_cond_signal(&w->more);
            pthread_mutex_unlock(&w->lock);
            return MHD_YES;
        }
        pthread_mutex_unlock(&w->lock);
    }
    return fn(r, id);
}

void writes_stop(struct writes *w)
{
    if (!w || !w->n)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->more);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < w->n; i++)
        pthread_join(w->th[i], NULL);
    w->n = 0;
}

void writes_free(struct writes *w)
{
    if (!w)
        return;
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->more);
    free(w);
}
