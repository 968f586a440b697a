/* MHD glue: the access callback collects the body (refusing oversize ones
 * early), checks auth, dispatches to the route, and the completion callback
 * logs the request and counts it. */
#include "api/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/browser.h"
#include "api/conn_guard.h"
#include "api/mhd_log.h"
#include "api/routes.h"
#include "api/writes.h"
#include "common/realtime.h"

struct api_server {
    struct app *app;
    struct MHD_Daemon *d;
    pthread_t waker;
    int waker_started;
};

void app_init(struct app *app)
{
    pthread_mutex_init(&app->lock, NULL);
    pthread_cond_init(&app->wake, NULL);
    pthread_cond_init(&app->idle, NULL);
    app->next_due = INFINITY;
    prom_init(&app->stats);
}

void app_destroy(struct app *app)
{
    pthread_mutex_destroy(&app->lock);
    pthread_cond_destroy(&app->wake);
    pthread_cond_destroy(&app->idle);
    prom_destroy(&app->stats);
}

static enum MHD_Result dispatch(struct req *r)
{
    char *q = strchr(r->url, '?');
    if (q)
        *q = 0;  /* MHD already parsed the query into GET arguments */
    int64_t id;
    int known;
    const struct route *pat;
    const struct route *rt = route_match(r->method, r->url, &id, &known, &pat);
    r->route = pat ? pat->pattern : "unmatched";
    if (!known)
        return reply_error(r, 404, "not_found", NULL, "no route %s %s", r->method, r->url);
    if (!auth_ok(r, rt ? rt->auth : pat->auth))
        return reply_error(r, 401, "unauthorized", NULL,
                           "a valid Authorization: Bearer token is required");
    if (!rt) {
        r->allow = pat->allow;
        return reply_error(r, 405, "method_not_allowed", NULL, "%s takes %s, not %s", pat->pattern,
                           pat->allow, r->method);
    }
    return rt->writes ? writes_defer(r->app->writes, r, rt->fn, id) : rt->fn(r, id);
}

/* A request's first line came: its headers are due (conn_guard.h), and a
 * malformed Content-Length among them is answered once (mhd_log.h). */
static void *request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct app *app = cls;
    conn_guard_request_line(app->guard, conn);
    return mhd_log_request_line(NULL, uri, conn);
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
    (void)version;
    struct app *app = cls;
    struct req *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r || !(r->url = strdup(url))) {
            free(r);
            return MHD_NO;
        }
        r->conn = conn;
        r->app = app;
        r->start = store_now();
        snprintf(r->method, sizeof r->method, "%s", method);
        *con_cls = r;
        pthread_mutex_lock(&app->lock);
        app->inflight++;
        pthread_mutex_unlock(&app->lock);
        conn_guard_headers_in(app->guard, conn);
        enum MHD_Result refused;
        if (browser_refused(r, &refused))
            return refused;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > app->max_body) {
            r->route = "oversize";
            return reply_error(r, 413, "too_large", NULL, "the body is over the limit of %zu bytes",
                               app->max_body);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        /* Chunked bodies carry no Content-Length: count them here. */
        if (!r->too_large && r->len + *upload_size <= app->max_body) {
            if (r->len + *upload_size + 1 > r->cap) {
                size_t cap = 2 * (r->len + *upload_size) + 1;
                char *p = realloc(r->body, cap);
                if (!p)
                    return MHD_NO;
                r->body = p;
                r->cap = cap;
            }
            memcpy(r->body + r->len, upload, *upload_size);
            r->len += *upload_size;
        } else {
            r->too_large = 1;
        }
        *upload_size = 0;
        if (store_now() - r->start > app->request_deadline_s) {
            r->route = "timeout";
            return reply_error(r, 408, "timeout", NULL, "the request took too long to arrive");
        }
        return MHD_YES;
    }
    if (r->answer)
        return reply_kept(r);  /* resumed by its write thread */
    if (r->close)
        return MHD_NO;
    if (r->status)
        return MHD_YES;  /* already answered (413 at the first call) */
    if (r->too_large) {
        r->route = "oversize";
        return reply_error(r, 413, "too_large", NULL, "the body is over the limit of %zu bytes",
                           app->max_body);
    }
    return dispatch(r);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct app *app = cls;
    conn_guard_request_done(app->guard, conn);
    struct req *r = *con_cls;
    if (!r)
        return;
    double dt = store_now() - r->start;
    int status = r->status ? r->status : 499;  /* closed before an answer */
    const char *route = r->route ? r->route : "unmatched";
    prom_observe(&app->stats, route, status, dt);
    /* A body of megabytes parsed as JSON took several times its size, on
     * one of many threads' malloc arenas, which keep what was freed: six
     * such requests left the server at 1.3 GB. Given back now, before the
     * request's line is logged (the line says its memory is back). */
    if (r->cap > (1u << 20)) {
        free(r->body);
        r->body = NULL;
        malloc_trim(0);
    }
    if (app->log_requests)
        fprintf(stderr, "cod-server: %s %s %d %.1fms%s\n", r->method, r->url, status, dt * 1e3,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (aborted)");
    /* resumed for work, it ended without looking (its pass failed: the
     * disk, say): another poll of its kind looks instead */
    if (r->poll_for_work)
        longpoll_hand_on(app, r->poll_takes);
    pthread_mutex_lock(&app->lock);
    app->inflight--;
    /* not wake: an answer sent is no new work, and a wake resumes parked
     * long-polls */
    pthread_cond_broadcast(&app->idle);
    pthread_mutex_unlock(&app->lock);
    free(r->body);
    free(r->url);
    free(r);
    *con_cls = NULL;
}

/* Resumes parked long-polls when work may have appeared for them (a few at
 * once, or all at most every LONGPOLL_GAP_S) and each when its time comes
 * (api/longpoll.c); sleeps until the soonest of these. */
static void *waker(void *arg)
{
    struct api_server *s = arg;
    struct app *app = s->app;
    double last_all = -INFINITY, last_due = -INFINITY;
    pthread_mutex_lock(&app->lock);
    while (!app->stopping) {
        double t = store_now();
        if (app->wake_all == 2 || (app->wake_all && t - last_all >= LONGPOLL_GAP_S)) {
            app->wake_all = 0;
            last_all = t;
            longpoll_resume_all(app);
        }
        if (longpoll_wanted(app))
            longpoll_resume_wanted(app);
        /* a walk over the parked polls at most every gap, not one at each
         * poll's due: thousands of them park at different moments */
        if (app->next_due <= t && t - last_due >= LONGPOLL_GAP_S) {
            last_due = t;
            app->next_due = longpoll_resume_due(app, t);
        }
        double at = app->next_due > last_due + LONGPOLL_GAP_S ? app->next_due
                                                               : last_due + LONGPOLL_GAP_S;
        if (app->wake_all && last_all + LONGPOLL_GAP_S < at)
            at = last_all + LONGPOLL_GAP_S;
        if (at == INFINITY) {
            pthread_cond_wait(&app->wake, &app->lock);
        } else {
            struct timespec ts = realtime_after(at - t);
            pthread_cond_timedwait(&app->wake, &app->lock, &ts);
        }
    }
    longpoll_resume_all(app);
    pthread_mutex_unlock(&app->lock);
    return NULL;
}

/* The listening socket, bound here rather than by MHD so that a port in use
 * is refused with the reason. SO_REUSEADDR only lets a restarted server
 * bind while old connections linger in TIME_WAIT; SO_REUSEPORT would let a
 * second server share the port (it must not: each answers from its own
 * database). */
int api_listen(const char *host, int port, int *bound, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        len = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        len = sizeof *v6;
    } else {
        snprintf(err, errlen, "--listen: \"%s\" is not a numeric IP address", host);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot make a socket: %s", strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot listen on %s:%d: %s%s", host, port, strerror(e),
                 e == EADDRINUSE ? " (another cod-server or another program holds the port)"
                 : e == EADDRNOTAVAIL ? " (not an address of this host)"
                                      : "");
        close(fd);
        return -1;
    }
    *bound = ntohs(ss.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    return fd;
}

int api_start(struct app *app, const struct api_options *o, int fd, struct api_server **out,
              char *err, size_t errlen)
{
    struct api_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    s->app = app;
    if (conn_guard_start(o->header_deadline_s, o->per_ip_limit, &app->guard, err, errlen) != 0) {
        close(fd);
        free(s);
        return -1;
    }
    if (writes_start(o->write_threads, &app->writes, err, errlen) != 0) {
        conn_guard_stop(app->guard);
        app->guard = NULL;
        close(fd);
        free(s);
        return -1;
    }
    /* the per-address limit is the guard's (conn_guard.h), which makes room
     * where libmicrohttpd's own would refuse */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, app,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o->threads,
                            MHD_OPTION_CONNECTION_LIMIT, o->conn_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, o->conn_timeout_s,
                            MHD_OPTION_NOTIFY_CONNECTION, conn_guard_notify, app->guard,
                            MHD_OPTION_URI_LOG_CALLBACK, request_line, app,
                            MHD_OPTION_NOTIFY_COMPLETED, completed_cb, app, MHD_OPTION_END);
    if (!s->d) {
        snprintf(err, errlen, "cannot start the HTTP server on %s", o->host);
        /* MHD closes the socket on some of its failures, not on all. */
        if (fcntl(fd, F_GETFD) != -1)
            close(fd);
        writes_stop(app->writes);
        writes_free(app->writes);
        app->writes = NULL;
        conn_guard_stop(app->guard);
        app->guard = NULL;
        free(s);
        return -1;
    }
    if (pthread_create(&s->waker, NULL, waker, s) != 0) {
        snprintf(err, errlen, "cannot start the long-poll thread");
        writes_stop(app->writes);
        MHD_stop_daemon(s->d);  /* closes the socket too */
        writes_free(app->writes);
        app->writes = NULL;
        conn_guard_stop(app->guard);
        app->guard = NULL;
        free(s);
        return -1;
    }
    s->waker_started = 1;
    *out = s;
    return 0;
}

void api_stop(struct api_server *s, double grace_s)
{
    struct app *app = s->app;
    MHD_socket lsock = MHD_quiesce_daemon(s->d);
    pthread_mutex_lock(&app->lock);
    app->stopping = 1;  /* parked long-polls now answer 204 when resumed */
    pthread_cond_broadcast(&app->wake);
    pthread_mutex_unlock(&app->lock);
    if (s->waker_started)
        pthread_join(s->waker, NULL);
    double until = store_now() + grace_s;
    pthread_mutex_lock(&app->lock);
    while (app->inflight > 0 && store_now() < until) {
        /* Resumed long-polls may park again before they see the flag. */
        longpoll_resume_all(app);
        struct timespec ts = realtime_after(0.02);
        pthread_cond_timedwait(&app->idle, &app->lock, &ts);
    }
    longpoll_resume_all(app);
    pthread_mutex_unlock(&app->lock);
    /* No connection may be suspended when libmicrohttpd stops: the write
     * threads answer what they hold first (and what comes later runs in
     * place), then the long-polls that may have parked meanwhile go. */
    writes_stop(app->writes);
    pthread_mutex_lock(&app->lock);
    while (app->store_pending > 0)
        pthread_cond_wait(&app->idle, &app->lock);
    longpoll_resume_all(app);
    pthread_mutex_unlock(&app->lock);
    MHD_stop_daemon(s->d);
    writes_free(app->writes);
    app->writes = NULL;
    conn_guard_stop(app->guard);
    app->guard = NULL;
    if (lsock != MHD_INVALID_SOCKET)
        close(lsock);
    free(s);
}
