/* The dashboard (clients/web/), compiled into cod-server: served without a
 * token (nothing in it is secret; its API calls carry the user's token). */
#ifndef COD_STATIC_H
#define COD_STATIC_H

#include "api/http.h"

/* Replies with the embedded file at name (a path below clients/web/), 304
 * when the request's If-None-Match holds its ETag, 404 when there is none. */
enum MHD_Result static_reply(struct req *r, const char *name);
/* GET /static/<path>: any embedded file. */
enum MHD_Result h_static(struct req *r, int64_t id);

#endif
