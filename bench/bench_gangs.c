/* Gang scheduling under load (bench/RESULTS.md): cod-server with a fleet
 * of simulated cuda workers, one thread and one keep-alive connection each.
 *   bench_gangs PORT SPEC_FILE WORKERS GANG
 * SPEC_FILE is an experiment asking for GANG GPUs. Measures
 *  1. throughput: WORKERS/GANG such experiments queued, then every worker
 *     long-polls at once: rank leases/s (and gangs/s) until all are leased;
 *  2. latency: GANG-1 workers parked in their long-polls, then the last one
 *     arrives: the time from its request to every rank holding its lease,
 *     over 20 gangs (p50, max).
 * The server should run with --log-requests 0 and a connection limit above
 * WORKERS (--conn-limit, --per-ip-limit). Workers are spread 8 to a host. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loadgen.h"

static int port;

static long json_int(const char *body, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(body, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

struct worker {
    long id;
    int fd;
    char secret[96];  /* its secret's header line */
    long run, rank;   /* of the lease it got */
    double answered;  /* when its lease came */
    int failed;
};

/* One long-poll, repeated while it answers 204. */
static void *lease_once(void *arg)
{
    struct worker *w = arg;
    char path[64], buf[1 << 16], *body;
    snprintf(path, sizeof path, "/v1/workers/%ld/lease", w->id);
    for (;;) {
        int st = roundtrip_h(w->fd, "POST", path, w->secret, "{\"wait\":30}", buf, sizeof buf,
                             &body);
        if (st == 204)
            continue;
        w->answered = now();
        if (st != 200) {
            w->failed = 1;
            return NULL;
        }
        w->run = json_int(body, "run");
        w->rank = json_int(body, "rank");
        return NULL;
    }
}

/* Every run whole: each of the n workers leased, ranks 0..gang-1 once per run. */
static int gangs_whole(const struct worker *w, int n, int gang)
{
    for (int i = 0; i < n; i++) {
        if (w[i].failed || w[i].run <= 0)
            return 0;
        int same = 0, rank_seen = 0;
        for (int k = 0; k < n; k++)
            if (w[k].run == w[i].run) {
                same++;
                rank_seen += w[k].rank == w[i].rank;
            }
        if (same != gang || rank_seen != 1)
            return 0;
    }
    return 1;
}

static int submit(int fd, const char *spec, char *buf, size_t cap)
{
    return roundtrip(fd, "POST", "/v1/experiments", spec, buf, cap, NULL) == 201 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_gangs PORT SPEC_FILE WORKERS GANG\n");
        return 2;
    }
    port = atoi(argv[1]);
    int n = atoi(argv[3]), gang = atoi(argv[4]);
    static char spec[1 << 16], buf[1 << 16];
    size_t sl = read_spec(argv[2], spec, sizeof spec);
    if (!sl || n < gang || gang < 2 || n % gang) {
        fprintf(stderr, "bench_gangs: a spec, and WORKERS a multiple of GANG >= 2\n");
        return 2;
    }
    int ctl = dial(port);
    struct worker *w = calloc((size_t)n, sizeof *w);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (ctl < 0 || !w || !t) {
        fprintf(stderr, "bench_gangs: cannot reach 127.0.0.1:%d\n", port);
        return 1;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    for (int i = 0; i < n; i++) {
        char reg[160], *body;
        snprintf(reg, sizeof reg, "{\"name\":\"sim%d\",\"device\":\"cuda\",\"host\":\"host%d\"}", i,
                 i / 8);
        if (roundtrip(ctl, "POST", "/v1/workers/register", reg, buf, sizeof buf, &body) != 201 ||
            (w[i].fd = dial(port)) < 0) {
            fprintf(stderr, "bench_gangs: cannot register worker %d\n", i);
            return 1;
        }
        w[i].id = json_int(body, "id");
        secret_line(body, "Cod-Worker-Secret", w[i].secret, sizeof w[i].secret);
    }

    /* 1. throughput: every worker at once, WORKERS/GANG gangs queued */
    int gangs = n / gang;
    for (int g = 0; g < gangs; g++)
        if (submit(ctl, spec, buf, sizeof buf) != 0) {
            fprintf(stderr, "bench_gangs: submit failed\n");
            return 1;
        }
    double t0 = now();
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], &attr, lease_once, &w[i]);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    double last = t0;
    for (int i = 0; i < n; i++)
        if (w[i].answered > last)
            last = w[i].answered;
    int whole = gangs_whole(w, n, gang);
    printf("gang leases, %d workers at once: %d gangs of %d in %.3f s: %.0f rank leases/s, "
           "%.1f gangs/s (every gang whole, no worker twice: %s)\n",
           n, gangs, gang, last - t0, n / (last - t0), gangs / (last - t0), whole ? "yes" : "NO");

    /* 2. latency: GANG-1 parked, then the last member arrives (the workers
     * of part 1 hold their runs; these are fresh ones) */
    enum { ROUNDS = 20 };
    double lat[ROUNDS];
    int ok = whole;
    for (int r = 0; r < ROUNDS && ok; r++) {
        struct worker *m = calloc((size_t)gang, sizeof *m);
        for (int i = 0; i < gang && m; i++) {
            char reg[160], *body;
            snprintf(reg, sizeof reg, "{\"name\":\"lat%d-%d\",\"device\":\"cuda\",\"host\":\"l%d\"}",
                     r, i, r);
            if (roundtrip(ctl, "POST", "/v1/workers/register", reg, buf, sizeof buf, &body) != 201 ||
                (m[i].fd = dial(port)) < 0)
                ok = 0;
            else {
                m[i].id = json_int(body, "id");
                secret_line(body, "Cod-Worker-Secret", m[i].secret, sizeof m[i].secret);
            }
        }
        ok = ok && m && submit(ctl, spec, buf, sizeof buf) == 0;
        for (int i = 0; ok && i < gang - 1; i++)
            pthread_create(&t[i], &attr, lease_once, &m[i]);
        /* wait for the event: the server shows them parked */
        int seen = 0;
        for (int k = 0; ok && k < 20000 && (seen = waiting_workers(ctl)) < gang - 1; k++)
            usleep(500);
        ok = ok && seen == gang - 1;
        double a = now();
        if (ok) {
            pthread_create(&t[gang - 1], &attr, lease_once, &m[gang - 1]);
            for (int i = 0; i < gang; i++)
                pthread_join(t[i], NULL);
        }
        double done = a;
        for (int i = 0; ok && i < gang; i++)
            if (m[i].answered > done)
                done = m[i].answered;
        ok = ok && gangs_whole(m, gang, gang);
        lat[r] = done - a;
        for (int i = 0; m && i < gang; i++)
            if (m[i].fd > 0)
                close(m[i].fd);
        free(m);
    }
    if (ok) {
        qsort(lat, ROUNDS, sizeof *lat, cmp_double);
        printf("last member to every rank leased (gang of %d, %d gangs, %d other workers busy): "
               "p50 %.1f ms, max %.1f ms\n",
               gang, ROUNDS, n, lat[ROUNDS / 2] * 1e3, lat[ROUNDS - 1] * 1e3);
    } else {
        fprintf(stderr, "bench_gangs: the latency rounds failed\n");
    }
    for (int i = 0; i < n; i++)
        close(w[i].fd);
    close(ctl);
    free(w);
    free(t);
    return ok ? 0 : 1;
}
