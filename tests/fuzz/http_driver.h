/* cod-server's HTTP API in-process, for the fuzz harnesses of the request
 * path: the real api/ server (libmicrohttpd, the router, the handlers) over
 * a real store in the scratch directory, on a loopback port, and requests
 * sent over a socket as a client sends them. A fixture is made once
 * through the API itself (workers, experiments, a sweep, leased runs with
 * points and logs); every input starts from a copy of that database, so
 * that what an input does never depends on the inputs before it and a
 * crash reproduces from its input alone.
 *
 * The oracle besides the sanitizers: no request may get a 5xx (every
 * failure of a request's content is a 4xx naming it; a 500 is the store or
 * a handler failing), go unanswered, or get a JSON body that is not JSON.
 * COD_FUZZ_TRACE=1 in the environment prints each request and its answer. */
#ifndef COD_FUZZ_HTTP_DRIVER_H
#define COD_FUZZ_HTTP_DRIVER_H

#include <stddef.h>

#define FUZZ_CLIENT_TOKEN "fuzz-client"
#define FUZZ_WORKER_TOKEN "fuzz-worker"

/* Starts the server and makes the fixture: workers 1 (cpu) and 2 (cuda),
 * experiment 1 leased as run 1 by worker 1 with points, logs and a
 * heartbeat, a sweep (experiments 2 and 3, the second cancelled),
 * experiment 4 (cuda) leased as run 2 by worker 2. Idempotent. */
void http_start(void);
/* Puts the database back to the fixture. */
void http_reset(void);

/* Sends one request: the method, the target (path and query; bytes HTTP
 * does not allow in a request line are percent-encoded, which the server
 * decodes), extra header lines ("Name: value\r\n" each; those that frame
 * the message are the driver's and are dropped), and the body. Returns
 * the status and checks the oracle above, aborting with the request when
 * it fails. */
int http_request(const char *method, size_t mlen, const char *target, size_t tlen,
                 const char *headers, size_t hlen, const char *body, size_t blen);

#endif
