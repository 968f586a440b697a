/* GET /openapi.json: the OpenAPI 3.1 description of this API (every route,
 * body, answer and error), api/openapi.json embedded at build time. Like
 * the dashboard's files it needs no token: it holds no data. */
#ifndef COD_OPENAPI_H
#define COD_OPENAPI_H

#include "api/http.h"

enum MHD_Result h_openapi(struct req *r, int64_t id);

#endif
