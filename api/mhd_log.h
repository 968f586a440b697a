/* libmicrohttpd's own log, and its answer to a malformed Content-Length.
 * libmicrohttpd 0.9.75 (Debian 12's) refuses a Content-Length that is not
 * a number (-1) or does not fit 64 bits (2^64 + 1) before cod-server sees
 * the request, and writes its status line and headers twice: its error
 * path queues the reply, then the state machine goes on as if the headers
 * were fine and builds them again. Its log line is the one moment that
 * path passes through cod-server, in the connection's own thread, before
 * anything is sent; there cod-server sends one answer of its own (a JSON
 * 400, or 413 for a number too large) and shuts the socket for writing, so
 * libmicrohttpd's doubled one never leaves. */
#ifndef COD_MHD_LOG_H
#define COD_MHD_LOG_H

#include <stdarg.h>

#include <microhttpd.h>

/* MHD_OPTION_URI_LOG_CALLBACK: notes, in the thread that parses it, which
 * connection's request is being read. Returns NULL (the request's state). */
void *mhd_log_request_line(void *cls, const char *uri, struct MHD_Connection *conn);
/* MHD_OPTION_EXTERNAL_LOGGER: the message on stderr, as libmicrohttpd
 * writes it; for a malformed Content-Length, the one answer above. */
void mhd_log(void *cls, const char *fmt, va_list ap);

#endif
