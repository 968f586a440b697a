/* Connections before their headers (docs/api.md, "Exposure"). libmicrohttpd
 * times a connection out only when it is idle, so one that sends a byte of
 * its headers now and then holds its slot for ever, and a few of them fill
 * an address's share (--per-ip-limit) and lock out that address's workers
 * and users. The guard closes a connection whose request's headers are not
 * all in --header-deadline seconds after it was accepted, or, on a
 * connection kept alive, after that request's first line came. And it
 * keeps the per-address limit itself, so that at the limit a connection of
 * that address that is in no request (still sending headers, the oldest
 * first, else kept alive and idle, the oldest first) is closed to make
 * room: a connection inside a request (reading its body, parked in a
 * long-poll, answering) is never closed for another, and a new one finds
 * no room only when every connection of its address is. */
#ifndef COD_CONN_GUARD_H
#define COD_CONN_GUARD_H

#include <stddef.h>

#include <microhttpd.h>

struct conn_guard;

/* Starts its thread (a deadline of 0: none; a limit of 0: none). 0, or -1
 * with err filled. */
int conn_guard_start(double header_deadline_s, unsigned per_ip_limit, struct conn_guard **out,
                     char *err, size_t errlen);
/* Once libmicrohttpd is stopped: every connection has been closed. */
void conn_guard_stop(struct conn_guard *g);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback; cls is the guard. */
void conn_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
/* A request's first line came (MHD_OPTION_URI_LOG_CALLBACK): on a kept-alive
 * connection, its headers are due from now. */
void conn_guard_request_line(struct conn_guard *g, struct MHD_Connection *conn);
/* A request's headers are in (its first call): no deadline, never closed for another. */
void conn_guard_headers_in(struct conn_guard *g, struct MHD_Connection *conn);
/* Its request ended: idle, kept alive. */
void conn_guard_request_done(struct conn_guard *g, struct MHD_Connection *conn);

#endif
