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

/* Wakes lease long-polls now (new work, a requeue): api/longpoll.c */
void longpoll_wake(struct app *app);
/* Parks the request until work may exist or its deadline: api/longpoll.c */
enum MHD_Result longpoll_park(struct req *r);
/* Resumes every parked request; the caller holds app->lock (api/server.c). */
void longpoll_resume_all(struct app *app);

#endif
