/* What an idle fleet costs cod-server (bench/RESULTS.md): N cuda workers
 * long-polling an empty queue, as a cluster's workers do between sweeps.
 *   bench_parked PORT SERVER_PID SPEC_FILE [WORKERS] [SECONDS]
 * Registers WORKERS cuda workers (default 2000), parks a 30 s lease
 * long-poll for each (one connection each, driven from one epoll loop),
 * waits until the server shows them all waiting, then for SECONDS (default
 * 10) counts the server's CPU time (/proc/PID/stat) and the write jobs its
 * store ran (cod_store_jobs_total): what the parked polls cost while nothing
 * happens. Then it submits SPEC_FILE (a cuda experiment) 10 times 0.3 s
 * apart and 10 times back to back, and times each submission to the moment
 * a parked worker's poll answers with it: what the waiting is for. For the
 * spaced ones it also counts what a submission costs the parked fleet: the
 * store jobs beyond the idle rate, and the polls woken for it
 * (cod_longpolls_woken_total, where the server has it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "bench/loadgen.h"

enum { WAIT_S = 30, SUBMISSIONS = 10 };

struct poll_conn {
    int fd, worker;
    char secret[96];  /* the worker's secret's header line */
    size_t got;
    char in[1 << 14];
};

static int ask(struct poll_conn *c)
{
    c->got = 0;
    return send_lease(c->fd, c->worker, c->secret, WAIT_S);
}

/* The status of c's answer once it is whole, 0 while it is not, -1 on a
 * failure. */
static int answer(struct poll_conn *c)
{
    ssize_t r = read(c->fd, c->in + c->got, sizeof c->in - 1 - c->got);
    if (r <= 0)
        return -1;
    c->got += (size_t)r;
    int status;
    if (!answer_whole(c->in, c->got, &status, NULL))
        return c->got == sizeof c->in - 1 ? -1 : 0;
    return status;
}

static double cpu_seconds(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* utime and stime are fields 14 and 15; the name in field 2 may hold
     * spaces, so count from its closing parenthesis */
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long metric(int fd, const char *name)
{
    static char buf[1 << 20];
    char *body;
    if (roundtrip(fd, "GET", "/metrics", NULL, buf, sizeof buf, &body) != 200)
        return -1;
    char pat[128];
    snprintf(pat, sizeof pat, "\n%s ", name);
    char *p = strstr(body, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_parked PORT SERVER_PID SPEC_FILE [WORKERS] [SECONDS]\n");
        return 2;
    }
    int port = atoi(argv[1]), pid = atoi(argv[2]);
    int n = argc > 4 ? atoi(argv[4]) : 2000;
    double seconds = argc > 5 ? atof(argv[5]) : 10;
    static char spec[1 << 16];
    size_t sl = read_spec(argv[3], spec, sizeof spec);
    static char buf[1 << 16];
    char *body;
    int fd = dial(port);
    if (!sl || fd < 0 || n < 1) {
        fprintf(stderr, "bench_parked: no spec in %s, or no server at 127.0.0.1:%d\n", argv[3], port);
        return 2;
    }
    struct poll_conn *c = calloc((size_t)n, sizeof *c);
    int ep = epoll_create1(0);
    if (!c || ep < 0) {
        fprintf(stderr, "bench_parked: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (roundtrip(fd, "POST", "/v1/workers/register", "{\"device\":\"cuda\"}", buf, sizeof buf,
                      &body) != 201) {
            fprintf(stderr, "bench_parked: register failed\n");
            return 1;
        }
        char *id = strstr(body, "\"id\":");
        c[i].worker = id ? atoi(id + 5) : -1;
        secret_line(body, "Cod-Worker-Secret", c[i].secret, sizeof c[i].secret);
        c[i].fd = dial(port);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c[i]};
        if (c[i].fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev) != 0 || ask(&c[i]) != 0) {
            fprintf(stderr, "bench_parked: connection %d: %s (ulimit -n?)\n", i, strerror(errno));
            return 1;
        }
    }
    /* the event: every poll parked, as the server itself shows it */
    double t0 = now();
    int waiting;
    while ((waiting = waiting_workers(fd)) >= 0 && waiting < n && now() - t0 < WAIT_S / 2)
        usleep(50000);
    if (waiting != n) {
        fprintf(stderr, "bench_parked: %d of %d polls parked\n", waiting, n);
        return 1;
    }
    long jobs0 = metric(fd, "cod_store_jobs_total");
    double cpu0 = cpu_seconds(pid);
    t0 = now();
    struct epoll_event evs[64];
    int early = 0;
    for (double left; (left = t0 + seconds - now()) > 0;) {
        int k = epoll_wait(ep, evs, 64, (int)(left * 1e3) + 1);
        early += k > 0 ? k : 0;
    }
    double dt = now() - t0, cpu = cpu_seconds(pid) - cpu0;
    long jobs = metric(fd, "cod_store_jobs_total") - jobs0;
    if (early || cpu0 < 0 || jobs0 < 0) {
        fprintf(stderr, "bench_parked: %d polls answered early, or no CPU or job count\n", early);
        return 1;
    }
    printf("%d parked lease polls, nothing queued: server CPU %.3f cores, %.0f store jobs/s "
           "(%.2f per parked poll per second)\n",
           n, cpu / dt, jobs / dt, jobs / dt / n);

    /* isolated submissions (each LONGPOLL_GAP_S and more after the last
     * pass over the parked polls), then back to back (each as soon as the
     * last was taken: a burst, whose wakes the server coalesces) */
    double idle_jobs_per_s = jobs / dt;
    for (int burst = 0; burst < 2; burst++) {
        double lat[SUBMISSIONS], ta = now();
        long jobs_a = metric(fd, "cod_store_jobs_total"),
             woken_a = metric(fd, "cod_longpolls_woken_total");
        for (int s = 0; s < SUBMISSIONS; s++) {
            if (!burst)
                usleep(300000);
            double ts = now();
            if (roundtrip(fd, "POST", "/v1/experiments", spec, buf, sizeof buf, NULL) != 201) {
                fprintf(stderr, "bench_parked: submission refused\n");
                return 1;
            }
            lat[s] = -1;
            while (lat[s] < 0) {
                int k = epoll_wait(ep, evs, 64, WAIT_S * 1000);
                if (k <= 0) {
                    fprintf(stderr, "bench_parked: no poll answered submission %d\n", s + 1);
                    return 1;
                }
                for (int e = 0; e < k; e++) {
                    struct poll_conn *x = evs[e].data.ptr;
                    int st = answer(x);
                    if (st == 200) {
                        lat[s] = now() - ts;
                        epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
                    } else if (st != 0) {
                        fprintf(stderr, "bench_parked: a poll answered %d\n", st);
                        return 1;
                    }
                }
            }
        }
        long jobs_b = metric(fd, "cod_store_jobs_total"),
             woken_b = metric(fd, "cod_longpolls_woken_total");
        double span = now() - ta;
        qsort(lat, SUBMISSIONS, sizeof *lat, cmp_double);
        printf("submission to a parked worker's lease, %s: median %.1f ms, max %.1f ms (%d)\n",
               burst ? "back to back" : "0.3 s apart", lat[SUBMISSIONS / 2] * 1e3,
               lat[SUBMISSIONS - 1] * 1e3, SUBMISSIONS);
        if (burst)
            continue;
        printf("a submission 0.3 s apart costs %.0f store jobs beyond the idle rate",
               ((double)(jobs_b - jobs_a) - idle_jobs_per_s * span) / SUBMISSIONS);
        if (woken_a >= 0 && woken_b >= 0)
            printf(", %.1f parked polls woken", (double)(woken_b - woken_a) / SUBMISSIONS);
        printf("\n");
    }
    for (int i = 0; i < n; i++)
        close(c[i].fd);
    close(ep);
    close(fd);
    free(c);
    return 0;
}
