/* The writes' own threads. A handler that writes waits for its batch's
 * commit (schema/db.c); on one of libmicrohttpd's pool threads that wait
 * would hold up every other connection the thread serves, heartbeats and
 * dashboards included, and let the thread bring at most one write to a
 * batch. So a writing route's request is suspended and its handler runs
 * here; its answer is kept (http.c) and sent once the connection is resumed. */
#ifndef COD_WRITES_H
#define COD_WRITES_H

#include "api/handlers.h"

struct writes;

/* Starts n threads. 0, or -1 with err filled. */
int writes_start(int n, struct writes **out, char *err, size_t errlen);
/* Suspends r and queues fn(r, id) for a thread of w; where w is NULL or
 * stopped, runs it here and now. fn answers; it must not park the request
 * (longpoll_park suspends a connection this has suspended already). */
enum MHD_Result writes_defer(struct writes *w, struct req *r, handler_fn fn, int64_t id);
/* Runs what is queued, resumes its connections, and joins the threads;
 * writes_defer runs handlers in place from then on. */
void writes_stop(struct writes *w);
/* Once libmicrohttpd is stopped too. */
void writes_free(struct writes *w);

#endif
