/* The route table: method, path pattern, handler, and which token guards
 * it. api/openapi.json describes each route (docs/api.md). */
#ifndef COD_ROUTES_H
#define COD_ROUTES_H

#include <stdint.h>
#include <stdio.h>

#include "api/handlers.h"

enum auth_kind { AUTH_NONE, AUTH_CLIENT, AUTH_WORKER };

struct route {
    const char *method, *pattern;
    handler_fn fn;
    enum auth_kind auth;
    const char *allow;   /* every method the pattern takes, for 405's Allow */
    int writes;          /* its handler waits for a commit: a write thread runs it */
};

/* The route for method and path. NULL with *path_known set when the path
 * exists under another method (405; *pattern then names it), NULL with
 * *path_known clear when nothing matches (404). *id: the {id} segment. */
const struct route *route_match(const char *method, const char *path, int64_t *id,
                                int *path_known, const struct route **pattern);

/* Writes one line per route, "METHOD PATTERN none|client|worker" (the token
 * it needs), for `cod-server --routes`. 0, or -1 when the write failed. */
int route_print(FILE *f);

#endif
