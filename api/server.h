/* The HTTP server: libmicrohttpd with a thread pool, the hardened limits of
 * DESIGN.md §9, one log line per request, and a graceful stop. */
#ifndef COD_SERVER_H
#define COD_SERVER_H

#include <stddef.h>

#include "api/app.h"

struct api_options {
    const char *host;      /* numeric IPv4 or IPv6 address */
    int port;              /* 0: an ephemeral port */
    int threads;
    unsigned conn_limit, per_ip_limit, conn_timeout_s;
};

struct api_server;

void app_init(struct app *app);
void app_destroy(struct app *app);

/* Listens and serves; *port gets the bound port. -1 with err filled. */
int api_start(struct app *app, const struct api_options *o, struct api_server **out, int *port,
              char *err, size_t errlen);
/* Stops accepting, answers parked long-polls, waits up to grace_s for
 * requests in flight, then stops the daemon. */
void api_stop(struct api_server *s, double grace_s);

#endif
