/* Bearer tokens: clients hold one, workers another (docs/api.md). */
#ifndef COD_AUTH_H
#define COD_AUTH_H

#include "api/http.h"
#include "api/routes.h"

/* 1 when the request may use a route guarded by kind. */
int auth_ok(struct req *r, enum auth_kind kind);

#endif
