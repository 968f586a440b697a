/* Load generator for cod-server (bench/RESULTS.md): plain sockets, one
 * keep-alive HTTP/1.1 connection per thread, on the same machine.
 *   bench_server PORT SPEC_FILE [SECONDS]
 * Measures GET /v1/experiments/{id} and GET /metrics at 32 connections
 * (requests/s, p50, p99), metric points/s ingested in batches of 1000,
 * submissions/s at 32 connections, and leases/s for 2,500 workers of 8 slots
 * (all registered before the clock starts), half of them at 32 connections
 * and half at 128, as many as a busy fleet's workers ask at once (group
 * commit's batches grow with them). The server should run with
 * --log-requests 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "bench/loadgen.h"

/* a worker's slots in the lease phase: a node of 8 GPUs, or a CPU worker
 * running 8 small jobs */
enum { SLOTS = 8 };

static int port;
static double seconds = 5;

struct job {
    const char *method, *path;
    const char *headers;  /* the run's secret, for ingest */
    const char *body;
    long n;              /* completed requests */
    long errors;
    double *lat;
    long lat_cap;
    long batches;        /* ingest mode: batches to send */
    int run, first_step;
};

static void *get_loop(void *arg)
{
    struct job *j = arg;
    static __thread char buf[1 << 20];
    int fd = dial(port);
    double stop = now() + seconds;
    while (fd >= 0 && now() < stop) {
        double t0 = now();
        int st = roundtrip(fd, j->method, j->path, j->body, buf, sizeof buf, NULL);
        if (st != 200)
            j->errors++;
        if (j->n < j->lat_cap)
            j->lat[j->n] = now() - t0;
        j->n++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void bench_get(const char *label, const char *path, int conns)
{
    struct job *jobs = calloc((size_t)conns, sizeof *jobs);
    pthread_t *t = calloc((size_t)conns, sizeof *t);
    long cap = 2000000;
    for (int i = 0; i < conns; i++) {
        jobs[i] = (struct job){.method = "GET", .path = path, .lat_cap = cap};
        jobs[i].lat = malloc((size_t)cap * sizeof(double));
    }
    double t0 = now();
    for (int i = 0; i < conns; i++)
        pthread_create(&t[i], NULL, get_loop, &jobs[i]);
    for (int i = 0; i < conns; i++)
        pthread_join(t[i], NULL);
    double dt = now() - t0;
    long n = 0, errors = 0, m = 0;
    for (int i = 0; i < conns; i++)
        n += jobs[i].n, errors += jobs[i].errors;
    double *all = malloc((size_t)n * sizeof *all);
    for (int i = 0; i < conns; i++)
        for (long k = 0; k < jobs[i].n && k < cap; k++)
            all[m++] = jobs[i].lat[k];
    qsort(all, (size_t)m, sizeof *all, cmp_double);
    printf("%-28s %2d conns  %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%ld requests, %ld errors)\n",
           label, conns, n / dt, m ? all[m / 2] * 1e3 : 0, m ? all[(long)(m * 0.99)] * 1e3 : 0, n,
           errors);
    for (int i = 0; i < conns; i++)
        free(jobs[i].lat);
    free(all);
    free(jobs);
    free(t);
}

static void *ingest_loop(void *arg)
{
    struct job *j = arg;
    static __thread char buf[1 << 16];
    char path[64];
    snprintf(path, sizeof path, "/v1/runs/%d/metrics", j->run);
    size_t cap = 1000 * 80 + 64;
    char *body = malloc(cap);
    int fd = dial(port);
    for (long b = 0; fd >= 0 && b < j->batches; b++) {
        size_t off = (size_t)snprintf(body, cap, "{\"points\":[");
        for (int k = 0; k < 1000; k++)
            off += (size_t)snprintf(body + off, cap - off,
                                    "%s{\"step\":%ld,\"name\":\"train/loss\",\"value\":%.4f}",
                                    k ? "," : "", j->first_step + b * 1000 + k, 3.0 + k * 1e-4);
        snprintf(body + off, cap - off, "]}");
        if (roundtrip_h(fd, "POST", path, j->headers, body, buf, sizeof buf, NULL) != 200)
            j->errors++;
        j->n++;
    }
    if (fd >= 0)
        close(fd);
    free(body);
    return NULL;
}

static void *submit_loop(void *arg)
{
    struct job *j = arg;
    static __thread char buf[1 << 16];
    int fd = dial(port);
    for (long k = 0; fd >= 0 && k < j->batches; k++) {
        if (roundtrip(fd, "POST", "/v1/experiments", j->body, buf, sizeof buf, NULL) != 201)
            j->errors++;
        j->n++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* A lease connection: its share of the workers, each leased until it is
 * full (SLOTS leases), one request in flight. */
struct lconn {
    int fd;
    const int *workers;
    char (*secrets)[96];  /* each worker's secret's header line */
    int n_workers, k, slot;
    long leases;
    size_t got;
    char in[1 << 14];
};

/* The next request of c: 0, or -1 when it cannot be sent. */
static int lconn_ask(struct lconn *c)
{
    c->got = 0;
    return send_lease(c->fd, c->workers[c->k], c->secrets[c->k], 0);
}

/* Reads what has come of c's answer: 1 when c is done (all its workers
 * full, or an answer other than 200, or a failure), else 0. */
static int lconn_read(struct lconn *c)
{
    ssize_t r = read(c->fd, c->in + c->got, sizeof c->in - 1 - c->got);
    if (r <= 0)
        return 1;
    c->got += (size_t)r;
    int status;
    if (!answer_whole(c->in, c->got, &status, NULL))
        return c->got == sizeof c->in - 1;
    if (status != 200)
        return 1;
    c->leases++;
    if (++c->slot == SLOTS) {
        c->slot = 0;
        if (++c->k == c->n_workers)
            return 1;
    }
    return lconn_ask(c) != 0;
}

/* n workers leased full at conns connections, each with its share of the
 * workers, every worker registered before the clock starts: the leases.
 * One thread drives every connection (epoll), as the fleet simulator does,
 * so that the client's thread switches do not take the cores from the
 * server. */
static long lease_phase(const int *workers, char (*secrets)[96], int n, int conns)
{
    struct lconn *c = calloc((size_t)conns, sizeof *c);
    int ep = epoll_create1(0), open = 0;
    long leases = 0;
    if (!c || ep < 0) {
        free(c);
        if (ep >= 0)
            close(ep);
        return 0;
    }
    double t0 = now();
    for (int i = 0; i < conns; i++) {
        int lo = (int)((long)n * i / conns), hi = (int)((long)n * (i + 1) / conns);
        c[i] = (struct lconn){.fd = dial(port), .workers = workers + lo, .secrets = secrets + lo,
                              .n_workers = hi - lo};
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c[i]};
        if (c[i].fd < 0 || c[i].n_workers == 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev) != 0 ||
            lconn_ask(&c[i]) != 0)
            continue;
        open++;
    }
    struct epoll_event evs[64];
    while (open > 0) {
        int k = epoll_wait(ep, evs, 64, -1);
        if (k < 0)
            break;
        for (int e = 0; e < k; e++) {
            struct lconn *x = evs[e].data.ptr;
            if (lconn_read(x)) {
                epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
                close(x->fd);
                x->fd = -1;
                open--;
            }
        }
    }
    double dt = now() - t0;
    for (int i = 0; i < conns; i++) {
        leases += c[i].leases;
        if (c[i].fd >= 0)
            close(c[i].fd);
    }
    printf("%-28s %3d conns %8.0f leases/s  (%ld leases in %.2f s, %d workers of %d slots)\n",
           "POST /v1/workers/{id}/lease", conns, leases / dt, leases, dt, n, SLOTS);
    close(ep);
    free(c);
    return leases;
}

static int json_int(const char *body, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(body, pat);
    return p ? atoi(p + strlen(pat)) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_server PORT SPEC_FILE [SECONDS]\n");
        return 2;
    }
    port = atoi(argv[1]);
    if (argc > 3)
        seconds = atof(argv[3]);
    static char spec[1 << 16];
    size_t sl = read_spec(argv[2], spec, sizeof spec);
    if (!sl) {
        fprintf(stderr, "bench_server: cannot read %s\n", argv[2]);
        return 2;
    }
    static char buf[1 << 20];
    char *body;
    int fd = dial(port);
    if (fd < 0 || roundtrip(fd, "POST", "/v1/experiments", spec, buf, sizeof buf, &body) != 201) {
        fprintf(stderr, "bench_server: cannot submit to 127.0.0.1:%d\n", port);
        return 1;
    }
    int exp = json_int(body, "id");
    char path[64];
    snprintf(path, sizeof path, "/v1/experiments/%d", exp);
    bench_get("GET /v1/experiments/{id}", path, 32);
    bench_get("GET /metrics", "/metrics", 32);

    /* ingest: one leased run, 4 connections x 50 batches of 1000 points */
    roundtrip(fd, "POST", "/v1/workers/register", "{\"device\":\"cpu\",\"capacity\":65536}", buf,
              sizeof buf, &body);
    int w = json_int(body, "id");
    char lp[64], wsecret[96], rsecret[96];
    secret_line(body, "Cod-Worker-Secret", wsecret, sizeof wsecret);
    snprintf(lp, sizeof lp, "/v1/workers/%d/lease", w);
    if (roundtrip_h(fd, "POST", lp, wsecret, "{\"wait\":1}", buf, sizeof buf, &body) != 200) {
        fprintf(stderr, "bench_server: lease failed\n");
        return 1;
    }
    int run = json_int(body, "run");
    secret_line(body, "Cod-Lease-Secret", rsecret, sizeof rsecret);
    enum { INGEST_CONNS = 4 };
    struct job ij[INGEST_CONNS];
    pthread_t it[INGEST_CONNS];
    double t0 = now();
    for (int i = 0; i < INGEST_CONNS; i++) {
        ij[i] = (struct job){.run = run, .headers = rsecret, .batches = 50,
                             .first_step = i * 1000000};
        pthread_create(&it[i], NULL, ingest_loop, &ij[i]);
    }
    long batches = 0, errors = 0;
    for (int i = 0; i < INGEST_CONNS; i++) {
        pthread_join(it[i], NULL);
        batches += ij[i].n;
        errors += ij[i].errors;
    }
    double dt = now() - t0;
    printf("%-28s %2d conns  %8.0f points/s  (%ld batches of 1000 in %.2f s, %ld errors)\n",
           "POST /v1/runs/{run}/metrics", INGEST_CONNS, batches * 1000 / dt, batches, dt, errors);

    /* submissions then leases, 32 connections each: what group commit
     * batches is what arrives together */
    enum { N_LEASE = 20000, SUBMIT_CONNS = 32 };
    struct job sj[SUBMIT_CONNS];
    pthread_t st[SUBMIT_CONNS];
    t0 = now();
    for (int i = 0; i < SUBMIT_CONNS; i++) {
        sj[i] = (struct job){.body = spec, .batches = N_LEASE / SUBMIT_CONNS};
        pthread_create(&st[i], NULL, submit_loop, &sj[i]);
    }
    long submitted = 0, refused = 0;
    for (int i = 0; i < SUBMIT_CONNS; i++) {
        pthread_join(st[i], NULL);
        submitted += sj[i].n - sj[i].errors;
        refused += sj[i].errors;
    }
    dt = now() - t0;
    printf("%-28s %2d conns  %8.0f submissions/s (%ld, %ld refused)\n", "POST /v1/experiments",
           SUBMIT_CONNS, submitted / dt, submitted, refused);
    if (refused) {
        fprintf(stderr, "bench_server: submit failed\n");
        return 1;
    }
    /* every worker registered before the clock starts */
    enum { N_WORKERS = N_LEASE / SLOTS };
    static int workers[N_WORKERS];
    static char secrets[N_WORKERS][96];
    char reg[64];
    snprintf(reg, sizeof reg, "{\"device\":\"cpu\",\"capacity\":%d}", SLOTS);
    for (int i = 0; i < N_WORKERS; i++) {
        if (roundtrip(fd, "POST", "/v1/workers/register", reg, buf, sizeof buf, &body) != 201) {
            fprintf(stderr, "bench_server: register failed\n");
            return 1;
        }
        workers[i] = json_int(body, "id");
        secret_line(body, "Cod-Worker-Secret", secrets[i], sizeof secrets[i]);
    }
    /* half the workers lease at 32 connections, the other half at 128 */
    long leases = lease_phase(workers, secrets, N_WORKERS / 2, 32) +
                  lease_phase(workers + N_WORKERS / 2, secrets + N_WORKERS / 2,
                              N_WORKERS - N_WORKERS / 2, 128);
    close(fd);
    return leases == submitted ? 0 : 1;
}
