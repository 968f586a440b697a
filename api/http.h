/* One HTTP request as the handlers see it, and the replies they send:
 * JSON bodies, errors as {"error": {"code", "message", "field"?}}. */
#ifndef COD_HTTP_H
#define COD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "api/app.h"

struct req {
    struct MHD_Connection *conn;
    struct app *app;
    char method[8];
    char *url;
    char *body;              /* the upload, copied (MHD's buffer lives only per call) */
    size_t len, cap;
    int too_large;
    double start;
    int status;              /* 0 until a reply is queued */
    const char *route;       /* the matched pattern, for stats */
    const char *allow;       /* methods of the path, for a 405 */
    double poll_deadline;    /* lease long-poll: when to give up and answer 204 */
    double poll_due;         /* parked: when the waker resumes it unless woken first */
    int64_t poll_worker;     /* the worker a parked lease poll asks for (0: not a lease) */
    int poll_takes;          /* enum lease_takes: the work its last pass said it could take */
    int poll_for_work;       /* resumed by a wake for work it can take (longpoll_wake_for) */
    long wakes_seen;         /* app->wakes when its last pass began */
    int suspended;
    struct req *next_waiter;
    /* a writing route's handler runs on a write thread (writes.h): */
    enum MHD_Result (*job)(struct req *r, int64_t id);
    int64_t job_id;
    struct req *next_job;
    int deferred;                 /* running there: replies are kept, not queued */
    int close;                    /* it failed without an answer: close the connection */
    struct MHD_Response *answer;  /* the kept reply, queued when libmicrohttpd calls again */
    int answer_status;
    /* a lease claimed by the store's thread while the connection waits (worker_api.c) */
    struct lease lease;
    int lease_formed, lease_rc, lease_ready;
};

enum MHD_Result reply_json(struct req *r, int status, json_t *body);  /* steals body */
enum MHD_Result reply_error(struct req *r, int status, const char *code, const char *field,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
enum MHD_Result reply_text(struct req *r, int status, const char *type, const char *text,
                           size_t len);
enum MHD_Result reply_empty(struct req *r, int status);
/* Queues the reply a write thread kept (libmicrohttpd's thread, server.c). */
enum MHD_Result reply_kept(struct req *r);
/* The store failed (logged there): 404 for ST_NOTFOUND; 503 unavailable
 * when the disk or another process's lock failed it during the request, so
 * the client tries again; else 500. */
enum MHD_Result reply_store(struct req *r, int rc, const char *what);

/* The body as a JSON object; on failure the 400/422 reply is already queued
 * and *ret holds what the handler must return. An empty body gives {} when
 * empty_ok. */
json_t *body_object(struct req *r, int empty_ok, enum MHD_Result *ret);
/* Query parameter as an integer in [min, max]; def when absent. -1 (and a
 * 400 queued into *ret) when malformed. */
int query_long(struct req *r, const char *key, long def, long min, long max, long *out,
               enum MHD_Result *ret);
const char *query_str(struct req *r, const char *key);
/* A query parameter that the answer quotes back (a series name): def when
 * absent; NULL, with a 400 queued into *ret, when it is not UTF-8, which
 * no JSON string can hold. */
const char *query_text(struct req *r, const char *key, const char *def, enum MHD_Result *ret);
/* Names the first key of obj outside allowed (NULL-terminated), or NULL. */
const char *unknown_key(json_t *obj, const char *const *allowed);
/* The client closed its end (its process died, say) while the request
 * waited parked: libmicrohttpd notices only when it writes the answer. */
int client_gone(struct req *r);

#endif
