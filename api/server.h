/* The HTTP server: libmicrohttpd with a thread pool, the hardened limits of
 * docs/api.md, one log line per request, and a graceful stop. */
#ifndef COD_SERVER_H
#define COD_SERVER_H

#include <stddef.h>

#include "api/app.h"

struct api_options {
    const char *host;      /* numeric IPv4 or IPv6 address, for messages */
    int threads;
    int write_threads;     /* writes.h */
    unsigned conn_limit, per_ip_limit, conn_timeout_s;
    double header_deadline_s;  /* accepted (or a request ended) to the next headers (conn_guard.h) */
};

struct api_server;

void app_init(struct app *app);
void app_destroy(struct app *app);

/* Binds and listens on host:port (0: an ephemeral one, *bound gets it); a
 * port another process holds is refused, never shared. The socket, or -1
 * with err naming the address and the reason. Connections wait in its
 * backlog until api_start serves it. */
int api_listen(const char *host, int port, int *bound, char *err, size_t errlen);
/* Serves the socket from api_listen (it now belongs to the server). -1
 * with err filled. */
int api_start(struct app *app, const struct api_options *o, int fd, struct api_server **out,
              char *err, size_t errlen);
/* Stops accepting, answers parked long-polls, waits up to grace_s for
 * requests in flight, then stops the daemon. */
void api_stop(struct api_server *s, double grace_s);

#endif
