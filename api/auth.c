/* Token checks. The comparison takes the same time wherever the first
 * difference lies, so response timing reveals nothing of the token. */
#include "api/auth.h"

#include <stdint.h>
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

/* The header name carries want, or want is "" (made before secrets). */
static int secret_given(struct req *r, const char *name, const char *want)
{
    const char *given = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
    return !want[0] || (given && same_secret(given, want));
}

int auth_worker_secret(struct req *r, int64_t worker, enum MHD_Result *ret)
{
    char want[STORE_SECRET_SIZE];
    int rc = store_worker_secret(r->app->store, worker, want, sizeof want);
    if (rc != ST_OK) {
        *ret = reply_store(r, rc, "worker");
        return -1;
    }
    if (secret_given(r, "Cod-Worker-Secret", want))
        return 0;
    *ret = reply_error(r, 403, "forbidden", NULL,
                       "worker %lld's calls carry the secret its registration gave, in the "
                       "Cod-Worker-Secret header: a worker acts for its own id only",
                       (long long)worker);
    return -1;
}

int auth_lease_secret(struct req *r, int64_t run, int rank, enum MHD_Result *ret)
{
    char want[STORE_SECRET_SIZE];
    int rc = store_member_secret(r->app->store, run, rank, want, sizeof want);
    if (rc == ST_INVALID) {
        *ret = reply_error(r, 422, "invalid", "rank", "run %lld has no rank %d", (long long)run,
                           rank);
        return -1;
    }
    if (rc != ST_OK) {
        *ret = reply_store(r, rc, "run");
        return -1;
    }
    if (secret_given(r, "Cod-Lease-Secret", want))
        return 0;
    *ret = reply_error(r, 403, "forbidden", NULL,
                       "run %lld's rank %d calls with the secret its lease gave, in the "
                       "Cod-Lease-Secret header: a run is its lease holder's alone",
                       (long long)run, rank);
    return -1;
}
