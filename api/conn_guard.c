/* The connections' guard: see conn_guard.h. A connection is closed by
 * shutdown() on its socket, under the guard's lock: libmicrohttpd reads the
 * end of it and closes the connection itself, and it says so
 * (MHD_CONNECTION_NOTIFY_CLOSED, which takes the same lock) before it
 * closes the descriptor, so a descriptor the guard holds is never one
 * already given to another connection. */
#include "api/conn_guard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/realtime.h"

enum { ADDR_BUCKETS = 1024 };

/* An address and how many of its connections the guard counts. */
struct address {
    unsigned char key[16];  /* IPv6, or IPv4 mapped into it */
    unsigned count;
    struct address *next;
};

/* Where a connection is: sending a request's headers (due), idle between
 * requests, or inside one (in no list). */
enum { DUE, IDLE, N_LISTS, IN_REQUEST = N_LISTS };

struct guarded {
    int fd;
    struct address *addr;   /* NULL: not counted (no memory for it) */
    double since;           /* when it entered its list */
    int where;
    int cut;                /* closed by the guard: no longer counted */
    struct guarded *prev, *next;
};

/* A list of connections, oldest first (one deadline for all, so the due
 * list is also the order they fall due). */
struct list {
    struct guarded *head, *tail;
};

struct conn_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    double deadline_s;
    unsigned per_ip;
    struct list lists[N_LISTS];
    struct address *buckets[ADDR_BUCKETS];
    pthread_t thread;
    int stopping;
    int idle;  /* the thread waits with nothing due: a new due connection wakes it */
};

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    } else if (sa && sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    }
}

static unsigned bucket(const unsigned char key[16])
{
    unsigned h = 2166136261u;
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 16777619u;
    return h % ADDR_BUCKETS;
}

/* The address's entry, made when absent; NULL when out of memory. */
static struct address *addr_get(struct conn_guard *g, const unsigned char key[16])
{
    struct address **b = &g->buckets[bucket(key)];
    for (struct address *a = *b; a; a = a->next)
        if (!memcmp(a->key, key, 16))
            return a;
    struct address *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    memcpy(a->key, key, 16);
    a->next = *b;
    *b = a;
    return a;
}

static void addr_release(struct conn_guard *g, struct address *a)
{
    if (!a || --a->count > 0)
        return;
    for (struct address **p = &g->buckets[bucket(a->key)]; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            free(a);
            return;
        }
}

static void unlist(struct conn_guard *g, struct guarded *c)
{
    if (c->where == IN_REQUEST)
        return;
    struct list *l = &g->lists[c->where];
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
    c->where = IN_REQUEST;
}

static void enlist(struct conn_guard *g, struct guarded *c, int where)
{
    struct list *l = &g->lists[where];
    c->since = mono_now();
    c->prev = l->tail;
    c->next = NULL;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
    c->where = where;
    /* only a thread that waits with nothing due needs waking: any other
     * wakes at its head's deadline, which comes before this one's (a wake
     * for every request would cost a thread switch each) */
    if (where == DUE && g->idle && g->deadline_s > 0) {
        g->idle = 0;
        pthread_cond_signal(&g->wake);
    }
}

/* Closes c's connection; from now on it counts for its address no more. */
static void cut(struct conn_guard *g, struct guarded *c)
{
    unlist(g, c);
    if (c->cut)
        return;
    c->cut = 1;
    shutdown(c->fd, SHUT_RDWR);
    addr_release(g, c->addr);
    c->addr = NULL;
}

static void *deadlines(void *arg)
{
    struct conn_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    struct list *due = &g->lists[DUE];
    while (!g->stopping) {
        double now = mono_now();
        while (g->deadline_s > 0 && due->head && due->head->since + g->deadline_s <= now)
            cut(g, due->head);
        if (g->deadline_s > 0 && due->head) {
            struct timespec ts = realtime_after(due->head->since + g->deadline_s - now);
            pthread_cond_timedwait(&g->wake, &g->lock, &ts);
        } else {
            g->idle = 1;
            pthread_cond_wait(&g->wake, &g->lock);
        }
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int conn_guard_start(double header_deadline_s, unsigned per_ip_limit, struct conn_guard **out,
                     char *err, size_t errlen)
{
    struct conn_guard *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    g->deadline_s = header_deadline_s;
    g->per_ip = per_ip_limit;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    int e = pthread_create(&g->thread, NULL, deadlines, g);
    if (e != 0) {
        snprintf(err, errlen, "cannot start the header deadline's thread: %s", strerror(e));
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->wake);
        free(g);
        return -1;
    }
    *out = g;
    return 0;
}

void conn_guard_stop(struct conn_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stopping = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    for (int i = 0; i < ADDR_BUCKETS; i++)
        while (g->buckets[i]) {
            struct address *a = g->buckets[i];
            g->buckets[i] = a->next;
            free(a);
        }
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->wake);
    free(g);
}

/* The oldest connection of addr in no request: sending headers first,
 * else idle; NULL when every one is inside a request. */
static struct guarded *evictable(struct conn_guard *g, const struct address *addr)
{
    for (int l = DUE; l < N_LISTS; l++)
        for (struct guarded *c = g->lists[l].head; c; c = c->next)
            if (c->addr == addr)
                return c;
    return NULL;
}

/* A new connection: counted for its address; at the address's limit its
 * oldest connection in no request makes room, and where none is the new
 * one is refused. */
static void started(struct conn_guard *g, struct MHD_Connection *conn, void **socket_context)
{
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD),
                                   *sa = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct guarded *c = calloc(1, sizeof *c);
    if (!c || !fd) {
        free(c);
        return; /* unguarded: libmicrohttpd's idle timeout still holds */
    }
    c->fd = fd->connect_fd;
    unsigned char key[16];
    addr_key(sa ? sa->client_addr : NULL, key);
    pthread_mutex_lock(&g->lock);
    c->addr = addr_get(g, key);
    c->where = IN_REQUEST;
    if (c->addr && g->per_ip && c->addr->count >= g->per_ip) {
        struct guarded *oldest = evictable(g, c->addr);
        if (oldest) {
            cut(g, oldest);
        } else {
            c->cut = 1;
            shutdown(c->fd, SHUT_RDWR);
            c->addr = NULL;
        }
    }
    if (!c->cut) {
        if (c->addr)
            c->addr->count++;
        enlist(g, c, DUE);
    }
    pthread_mutex_unlock(&g->lock);
    *socket_context = c;
}

void conn_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    struct conn_guard *g = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        started(g, conn, socket_context);
        return;
    }
    struct guarded *c = *socket_context;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    unlist(g, c);
    if (!c->cut)
        addr_release(g, c->addr);
    pthread_mutex_unlock(&g->lock);
    free(c);
    *socket_context = NULL;
}

static struct guarded *guarded_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void conn_guard_request_line(struct conn_guard *g, struct MHD_Connection *conn)
{
    struct guarded *c = guarded_of(conn);
    if (!g || !c)
        return;
    pthread_mutex_lock(&g->lock);
    if (c->where == IDLE) {
        unlist(g, c);
        enlist(g, c, DUE);
    }
    pthread_mutex_unlock(&g->lock);
}

void conn_guard_headers_in(struct conn_guard *g, struct MHD_Connection *conn)
{
    struct guarded *c = guarded_of(conn);
    if (!g || !c)
        return;
    pthread_mutex_lock(&g->lock);
    unlist(g, c);
    pthread_mutex_unlock(&g->lock);
}

void conn_guard_request_done(struct conn_guard *g, struct MHD_Connection *conn)
{
    struct guarded *c = guarded_of(conn);
    if (!g || !c)
        return;
    pthread_mutex_lock(&g->lock);
    if (!c->cut && c->where == IN_REQUEST)
        enlist(g, c, IDLE);
    pthread_mutex_unlock(&g->lock);
}
