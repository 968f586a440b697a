/* libmicrohttpd's log: see mhd_log.h. */
#include "api/mhd_log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The connection whose request line this thread read last. A connection
 * belongs to one of libmicrohttpd's threads for its life, and a request
 * sent at once has its headers parsed in the same pass as its line. */
static _Thread_local struct MHD_Connection *reading;

void *mhd_log_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)uri;
    reading = conn;
    return NULL;
}

/* 400 for a Content-Length that is no decimal number, 413 for one past
 * 64 bits; 0 for a valid one (then another connection's is at fault). */
static int malformed(const char *v)
{
    if (!v || !*v)
        return 0;
    for (const char *p = v; *p; p++)
        if (*p < '0' || *p > '9')
            return 400;
    errno = 0;
    strtoull(v, NULL, 10);
    return errno == ERANGE ? 413 : 0;
}

static void answer_once(struct MHD_Connection *conn)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_CONTENT_LENGTH);
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int status = malformed(v);
    if (!status || !fd)
        return;
    char body[256], reply[512];
    int blen = snprintf(body, sizeof body,
                        "{\"error\":{\"code\":\"%s\",\"message\":\"Content-Length must be a "
                        "length in bytes, a decimal number below 2^64\"}}\n",
                        status == 400 ? "bad_request" : "too_large");
    int n = snprintf(reply, sizeof reply,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     "Connection: close\r\n\r\n%s",
                     status, status == 400 ? "Bad Request" : "Content Too Large", blen, body);
    if (send(fd->connect_fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
        shutdown(fd->connect_fd, SHUT_WR);
}

void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    vfprintf(stderr, fmt, ap);
    if (reading && strstr(fmt, "Content-Length") && strstr(fmt, "Closing connection"))
        answer_once(reading);
}
