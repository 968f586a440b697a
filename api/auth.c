/* Token checks. The comparison takes the same time wherever the first
 * difference lies, so response timing reveals nothing of the token. */
#include "api/auth.h"

#include <string.h>

static int same_secret(const char *given, const char *want)
{
    size_t n = strlen(given), m = strlen(want);
    unsigned char diff = (unsigned char)(n != m);
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned char)(want[i] ^ (i < n ? given[i] : 0));
    return diff == 0;
}

int auth_ok(struct req *r, enum auth_kind kind)
{
    struct app *app = r->app;
    /* Workers use their own token when one is set, else the client one. */
    const char *want = kind == AUTH_NONE                        ? NULL
                       : kind == AUTH_WORKER && app->worker_token ? app->worker_token
                                                                  : app->token;
    if (!want)
        return 1;
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncmp(h, "Bearer ", 7))
        return 0;
    return same_secret(h + 7, want);
}
