/* Load generator for cod-server (bench/RESULTS.md): plain sockets, one
 * keep-alive HTTP/1.1 connection per thread, on the same machine.
 *   bench_server PORT SPEC_FILE [SECONDS]
 * Measures GET /v1/experiments/{id} and GET /metrics at 32 connections
 * (requests/s, p50, p99), metric points/s ingested in batches of 1000,
 * submissions/s and leases/s at 32 connections. The server should run with
 * --log-requests 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loadgen.h"

static int port;
static double seconds = 5;

struct job {
    const char *method, *path;
    const char *body;
    int worker;          /* lease mode: the worker id */
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
        if (roundtrip(fd, "POST", path, body, buf, sizeof buf, NULL) != 200)
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

static void *lease_loop(void *arg)
{
    struct job *j = arg;
    static __thread char buf[1 << 16];
    char path[64];
    snprintf(path, sizeof path, "/v1/workers/%d/lease", j->worker);
    int fd = dial(port);
    for (;;) {
        int st = fd >= 0 ? roundtrip(fd, "POST", path, "{\"wait\":0}", buf, sizeof buf, NULL) : -1;
        if (st != 200)
            break;
        j->n++;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
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
    FILE *f = fopen(argv[2], "r");
    static char spec[1 << 16];
    size_t sl = f ? fread(spec, 1, sizeof spec - 1, f) : 0;
    if (f)
        fclose(f);
    spec[sl] = 0;
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
    char lp[64];
    snprintf(lp, sizeof lp, "/v1/workers/%d/lease", w);
    if (roundtrip(fd, "POST", lp, "{\"wait\":1}", buf, sizeof buf, &body) != 200) {
        fprintf(stderr, "bench_server: lease failed\n");
        return 1;
    }
    int run = json_int(body, "run");
    enum { INGEST_CONNS = 4 };
    struct job ij[INGEST_CONNS];
    pthread_t it[INGEST_CONNS];
    double t0 = now();
    for (int i = 0; i < INGEST_CONNS; i++) {
        ij[i] = (struct job){.run = run, .batches = 50, .first_step = i * 1000000};
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
    enum { N_LEASE = 20000, SUBMIT_CONNS = 32, LEASE_CONNS = 32 };
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
    struct job lj[LEASE_CONNS];
    pthread_t lt[LEASE_CONNS];
    t0 = now();
    for (int i = 0; i < LEASE_CONNS; i++) {
        roundtrip(fd, "POST", "/v1/workers/register", "{\"device\":\"cpu\",\"capacity\":65536}",
                  buf, sizeof buf, &body);
        lj[i] = (struct job){.worker = json_int(body, "id")};
        pthread_create(&lt[i], NULL, lease_loop, &lj[i]);
    }
    long leases = 0;
    for (int i = 0; i < LEASE_CONNS; i++) {
        pthread_join(lt[i], NULL);
        leases += lj[i].n;
    }
    dt = now() - t0;
    printf("%-28s %2d conns  %8.0f leases/s  (%ld leases in %.2f s)\n", "POST /v1/workers/{id}/lease",
           LEASE_CONNS, leases / dt, leases, dt);
    close(fd);
    return leases == submitted ? 0 : 1;
}
