/* The load generators' HTTP (bench_server, bench_gangs): plain sockets to
 * cod-server on loopback, one keep-alive HTTP/1.1 connection per caller, a
 * request at a time, so that the client costs little beside the server. */
#ifndef COD_BENCH_LOADGEN_H
#define COD_BENCH_LOADGEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One request on a keep-alive connection, with extra header lines
 * ("Name: value\r\n" each, or NULL); returns the status, the body in
 * *body (static per thread buffer), or -1. A body goes as JSON. */
static int roundtrip_h(int fd, const char *method, const char *path, const char *headers,
                       const char *body, char *buf, size_t cap, char **resp_body)
{
    char head[768];
    size_t blen = body ? strlen(body) : 0;
    int hl = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%sContent-Length: %zu\r\n\r\n",
                      method, path, body ? "Content-Type: application/json\r\n" : "",
                      headers ? headers : "", blen);
    /* head and body in one segment, as an HTTP client library sends a
     * small request: two would cost the server a second wake-up */
    struct iovec iov[2] = {{head, (size_t)hl}, {(void *)body, blen}};
    for (size_t off = 0, total = (size_t)hl + blen; off < total;) {
        ssize_t w = writev(fd, iov, 2);
        if (w <= 0)
            return -1;
        off += (size_t)w;
        for (int i = 0; i < 2; i++) {
            size_t k = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + k;
            iov[i].iov_len -= k;
            w -= (ssize_t)k;
        }
    }
    size_t got = 0;
    char *end = NULL;
    while (!end) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
        buf[got] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    int status = atoi(buf + 9);
    char *cl = strcasestr(buf, "\r\nContent-Length:");
    size_t len = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
    size_t need = (size_t)(end + 4 - buf) + len;
    if (need >= cap)
        return -1;
    while (got < need) {
        ssize_t r = read(fd, buf + got, need - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    buf[need] = 0;
    if (resp_body)
        *resp_body = end + 4;
    return status;
}

static int roundtrip(int fd, const char *method, const char *path, const char *body, char *buf,
                     size_t cap, char **resp_body)
{
    return roundtrip_h(fd, method, path, NULL, body, buf, cap, resp_body);
}

/* The header line that carries the secret of an answer (a registration's
 * or a lease's: docs/api.md) as name, "Name: SECRET\r\n", into line (n
 * bytes); "" when the answer has none. */
static inline void secret_line(const char *answer, const char *name, char *line, size_t n)
{
    const char *p = strstr(answer, "\"secret\":\"");
    const char *end = p ? strchr(p + 10, '"') : NULL;
    if (!end || snprintf(line, n, "%s: %.*s\r\n", name, (int)(end - p - 10), p + 10) >= (int)n)
        line[0] = 0;
}

/* What has come of one answer, in[0..len) (in has room for a NUL after
 * it): 1 with its status, and its body where body is not NULL, once its
 * head and Content-Length bytes are in; 0 while they are not. */
static inline int answer_whole(char *in, size_t len, int *status, char **body)
{
    in[len] = 0;
    char *end = strstr(in, "\r\n\r\n");
    if (!end)
        return 0;
    char *cl = strcasestr(in, "\r\nContent-Length:");
    size_t n = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
    if ((size_t)(end + 4 - in) + n > len)
        return 0;
    *status = atoi(in + 9);
    if (body)
        *body = end + 4;
    return 1;
}

/* The spec file at path into buf, NUL-terminated: its length, 0 when it
 * cannot be read or is empty. */
static inline size_t read_spec(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return n;
}

/* A lease request for worker, with its secret's header line, waiting up
 * to wait s, sent without waiting for its answer (the caller reads it: an
 * epoll loop drives many): 0, or -1. */
static inline int send_lease(int fd, int worker, const char *secret, int wait)
{
    char body[32], req[384];
    int bl = snprintf(body, sizeof body, "{\"wait\":%d}", wait);
    int n = snprintf(req, sizeof req,
                     "POST /v1/workers/%d/lease HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
                     worker, secret, bl, body);
    for (int off = 0; off < n;) {
        ssize_t w = write(fd, req + off, (size_t)(n - off));
        if (w <= 0)
            return -1;
        off += (int)w;
    }
    return 0;
}

/* How many workers the server shows parked in a lease long-poll. */
static inline int waiting_workers(int fd)
{
    static char buf[1 << 24];
    char *body;
    if (roundtrip(fd, "GET", "/v1/workers", NULL, buf, sizeof buf, &body) != 200)
        return -1;
    int n = 0;
    for (char *p = body; (p = strstr(p, "\"waiting\":true")); p++)
        n++;
    return n;
}

/* for qsort of latencies */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
