/* The endpoints (api/openapi.json). Each answers one matched route; id is the
 * numeric path segment where the route has one. */
#ifndef COD_HANDLERS_H
#define COD_HANDLERS_H

#include <stdint.h>

#include "api/http.h"

typedef enum MHD_Result (*handler_fn)(struct req *r, int64_t id);

/* client side: api/handlers.c */
enum MHD_Result h_dashboard(struct req *r, int64_t id);
enum MHD_Result h_healthz(struct req *r, int64_t id);
enum MHD_Result h_readyz(struct req *r, int64_t id);
enum MHD_Result h_prometheus(struct req *r, int64_t id);
enum MHD_Result h_create_experiment(struct req *r, int64_t id);
enum MHD_Result h_list_experiments(struct req *r, int64_t id);
enum MHD_Result h_show_experiment(struct req *r, int64_t id);
enum MHD_Result h_cancel(struct req *r, int64_t id);
enum MHD_Result h_metrics(struct req *r, int64_t id);
enum MHD_Result h_layers(struct req *r, int64_t id);
enum MHD_Result h_layer_history(struct req *r, int64_t id);
enum MHD_Result h_logs(struct req *r, int64_t id);
enum MHD_Result h_create_sweep(struct req *r, int64_t id);
enum MHD_Result h_show_sweep(struct req *r, int64_t id);
/* a sweep's averaged series and report: api/sweep_views.c */
enum MHD_Result h_sweep_series(struct req *r, int64_t id);
enum MHD_Result h_sweep_report(struct req *r, int64_t id);
enum MHD_Result h_workers(struct req *r, int64_t id);
enum MHD_Result h_remove_worker(struct req *r, int64_t id);

/* worker protocol: api/worker_api.c */
enum MHD_Result h_register(struct req *r, int64_t id);
enum MHD_Result h_lease(struct req *r, int64_t id);
enum MHD_Result h_worker_offline(struct req *r, int64_t id);
enum MHD_Result h_heartbeat(struct req *r, int64_t id);
enum MHD_Result h_report(struct req *r, int64_t id);
enum MHD_Result h_run_logs(struct req *r, int64_t id);
enum MHD_Result h_finish(struct req *r, int64_t id);
enum MHD_Result h_rendezvous_post(struct req *r, int64_t id);
enum MHD_Result h_rendezvous_get(struct req *r, int64_t id);

/* Long-polls (api/longpoll.c says when a parked one runs again). */
/* Work may have appeared for anyone (a requeue, a cancel, a worker gone, a
 * gang submitted): the waker resumes every parked request soon. */
void longpoll_wake(struct app *app);
/* n jobs were submitted that workers of one kind can take: the waker
 * resumes that many parked lease polls of such workers soon. */
enum wake_for { FOR_CPU, FOR_CUDA, FOR_ANY };
void longpoll_wake_for(struct app *app, enum wake_for kind, int n);
/* A poll resumed for work took a job: one more poll of what it takes
 * (enum lease_takes) is resumed soon, in case a woken one could not take
 * its job. */
void longpoll_pass_on(struct app *app, int takes);
/* A poll resumed for work ended without looking (its pass failed): another
 * poll of what it takes looks instead. */
void longpoll_hand_on(struct app *app, int takes);
/* A gang formed: its members wait parked to be told, and a gang's members
 * are few and rare, so every parked request runs again now, not after the
 * gap that coalesces the other wakes. */
void longpoll_wake_gang(struct app *app);
/* A slot freed on one worker: its own parked lease polls run again now. */
void longpoll_wake_worker(struct app *app, int64_t worker);
/* A pollable handler calls this before it looks for what it waits for: a
 * wake between then and its park is not lost (it runs again soon). */
void longpoll_pass_begins(struct req *r);
/* Parks the request until work may exist, its refresh or its deadline. */
enum MHD_Result longpoll_park(struct req *r);
/* The waker's, with app->lock held: resumes every parked request (at most
 * every LONGPOLL_GAP_S, unless a gang formed); resumes as many parked lease
 * polls as app->want asks, of the kinds it asks (at once: a few polls
 * each); resumes those due by now, returning the soonest due of the others
 * (INFINITY when none is parked), at most every LONGPOLL_GAP_S. */
#define LONGPOLL_GAP_S 0.1
void longpoll_resume_all(struct app *app);
int longpoll_wanted(const struct app *app);
void longpoll_resume_wanted(struct app *app);
double longpoll_resume_due(struct app *app, double now);

#endif
