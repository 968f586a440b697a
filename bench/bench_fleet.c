/* The fleet simulator (bench/RESULTS.md): one process plays N cuda workers
 * and D dashboards against a cod-server on loopback, each over its own
 * keep-alive connection, one request in flight at a time, all in one epoll
 * loop.
 *   bench_fleet PORT SPEC_FILE WORKERS DASHBOARDS SECONDS [HEARTBEAT_S] [DASH_S] [RUN_S]
 *               [SPREAD]
 * A worker registers, leases, heartbeats every HEARTBEAT_S (default 5)
 * seconds with a batch of 10 train/loss points every other beat, and after
 * a run of RUN_S (default 40) seconds ± SPREAD (default 0.5: uniform in
 * 20-60 s; 0: all alike) reports its final point, finishes and leases the
 * next; every worker registers first, then their first leases are spread
 * over one heartbeat period, and a run ends at its own time, not at a
 * beat, so the beats stay spread as a real fleet's do. A dashboard
 * every DASH_S (default 3) seconds reads the experiment list, one running
 * experiment and its loss curve. For SECONDS the simulator prints requests/s
 * and p50/p99/p999 latency per endpoint (from a request's write to its
 * answer's arrival in the socket; and the p99 as this loop saw it), the
 * leases lost (a 409 to a worker
 * that beat on time), the server's commits and fsyncs per second
 * (/metrics), and at the end checks every finished experiment's curve
 * against what its worker sent: points missing or different. SPEC_FILE is
 * an experiment for a cuda worker whose train.steps is the final step a
 * worker reports (the simulator reads it from the spec).
 * One file over 700 lines on purpose: the workers' and dashboards' state
 * machines, the loop and the final check all read one struct conn and the
 * record of what was sent, and a benchmark is best read whole. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "bench/loadgen.h"

enum ep { E_REGISTER, E_SUBMIT, E_LEASE, E_HEARTBEAT, E_REPORT, E_FINISH, E_LIST, E_SHOW,
          E_CURVE, E_CHECK, N_EP };
static const char *const ep_name[N_EP] = {
    "POST /v1/workers/register", "POST /v1/experiments", "POST /v1/workers/{id}/lease",
    "POST /v1/runs/{run}/heartbeat", "POST /v1/runs/{run}/metrics", "POST /v1/runs/{run}/finish",
    "GET /v1/experiments?limit=50", "GET /v1/experiments/{id}", "GET .../metrics (curve)",
    "GET .../metrics (final check)"};

struct lat {
    double *v;
    long n, cap;
};

/* Two clocks of each answer: from the request's write to the answer's
 * arrival in the socket (the kernel's receive timestamp, SO_TIMESTAMPNS):
 * what a worker of its own would wait; and to when this one loop got round
 * to it: that plus the simulator's own lag, which a real fleet of separate
 * machines does not have. */
static struct lat lat[N_EP], seen_lat[N_EP];
static int measuring;

static void lat_push(struct lat *l, enum ep e, double s)
{
    if (!measuring && e != E_CHECK)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        double *p = realloc(l->v, (size_t)l->cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "fleet: out of memory\n");
            exit(1);
        }
        l->v = p;
    }
    l->v[l->n++] = s;
}

static void lat_add(enum ep e, double s)
{
    lat_push(&lat[e], e, s);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A run's points as its worker sent them: train/loss at steps 1..last
 * and at the final step, each of value step * 0.001 + exp */
struct sent {
    long exp;
    int last;
    int final_sent;
    int finished;
};

static struct sent *runs;
static long n_runs, cap_runs;

enum role { WORKER, DASHBOARD };
enum phase { REGISTER, LEASE, RUNNING, FINISHING, IDLE };

struct conn {
    int fd;
    enum role role;
    long id;          /* worker id */
    long run, exp;
    long sent_idx;    /* its run in runs[] */
    int beat, step;
    double run_started, run_len, next_at, beat_due;
    double sent_at, arrived; /* wall clock: the request's write, the answer's last arrival */
    enum phase phase;
    enum ep pending;
    int dash_stage;
    /* its secrets' header lines: the worker's, its run's (docs/api.md) */
    char wsecret[96], lsecret[96];
    /* the request and its answer */
    char out[16384];
    size_t out_len, out_off;
    char *in;
    size_t in_len, in_cap;
    int busy;
    size_t heap_pos;
};

static struct conn *conns;
static int n_conns;
static int port, epfd;
static double hb_s = 5, dash_s = 3, run_s = 40, spread = 0.5;
static long steps_final;
static long lost_leases, errors_other, lease_empty, registered;
static char spec[1 << 16];

/* the timer heap: connections by next_at */
static struct conn **heap;
static size_t heap_n;

static void heap_swap(size_t a, size_t b)
{
    struct conn *t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
    heap[a]->heap_pos = a;
    heap[b]->heap_pos = b;
}

static void heap_up(size_t i)
{
    while (i && heap[(i - 1) / 2]->next_at > heap[i]->next_at) {
        heap_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_n && heap[l]->next_at < heap[m]->next_at)
            m = l;
        if (r < heap_n && heap[r]->next_at < heap[m]->next_at)
            m = r;
        if (m == i)
            return;
        heap_swap(i, m);
        i = m;
    }
}

static void schedule(struct conn *c, double at)
{
    c->next_at = at;
    c->heap_pos = heap_n;
    heap[heap_n++] = c;
    heap_up(c->heap_pos);
}

static struct conn *heap_pop(void)
{
    struct conn *c = heap[0];
    heap_n--;
    if (heap_n) {
        heap[0] = heap[heap_n];
        heap[0]->heap_pos = 0;
        heap_down(0);
    }
    return c;
}

/* A request, with the secret its path needs as a worker sends it: its
 * own for /v1/workers/{id}/..., its run's for /v1/runs/{run}/... */
static void send_req(struct conn *c, enum ep e, const char *method, const char *path,
                     const char *body)
{
    size_t blen = body ? strlen(body) : 0;
    const char *secret = !strncmp(path, "/v1/runs/", 9)                                 ? c->lsecret
                         : !strncmp(path, "/v1/workers/", 12) && strcmp(path + 12, "register") ? c->wsecret
                                                                                           : "";
    int n = snprintf(c->out, sizeof c->out,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%sContent-Length: %zu\r\n\r\n%s",
                     method, path, body ? "Content-Type: application/json\r\n" : "", secret, blen,
                     body ? body : "");
    if (n < 0 || (size_t)n >= sizeof c->out) {
        fprintf(stderr, "fleet: a request larger than its buffer\n");
        exit(1);
    }
    c->out_len = (size_t)n;
    c->out_off = 0;
    c->in_len = 0;
    c->pending = e;
    c->busy = 1;
    c->arrived = 0;
    /* written now, not at the next turn of the loop, so that the clock
     * starts when the server can see the request */
    c->sent_at = wall_now();
    ssize_t w = write(c->fd, c->out, c->out_len);
    if (w < 0 && errno != EAGAIN) {
        fprintf(stderr, "fleet: write: %s\n", strerror(errno));
        exit(1);
    }
    c->out_off = w > 0 ? (size_t)w : 0;
    struct epoll_event ev = {.events = c->out_off < c->out_len ? EPOLLOUT | EPOLLIN : EPOLLIN,
                             .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static long json_long(const char *body, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(body, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

static long track_run(long exp)
{
    if (n_runs == cap_runs) {
        cap_runs = cap_runs ? 2 * cap_runs : 16384;
        struct sent *p = realloc(runs, (size_t)cap_runs * sizeof *p);
        if (!p) {
            fprintf(stderr, "fleet: out of memory\n");
            exit(1);
        }
        runs = p;
    }
    runs[n_runs] = (struct sent){exp, 0, 0, 0};
    return n_runs++;
}

/* The next request of a worker whose timer fired. */
static void worker_act(struct conn *c)
{
    char path[96], body[2048];
    double t = now();
    switch (c->phase) {
    case REGISTER:
        snprintf(body, sizeof body, "{\"name\":\"fleet/%ld\",\"device\":\"cuda\",\"host\":\"h%ld\"}",
                 (long)(c - conns), (long)(c - conns) / 8);
        send_req(c, E_REGISTER, "POST", "/v1/workers/register", body);
        return;
    case LEASE:
        snprintf(path, sizeof path, "/v1/workers/%ld/lease", c->id);
        send_req(c, E_LEASE, "POST", path, "{\"wait\":0}");
        return;
    case RUNNING: {
        if (t >= c->run_started + c->run_len) {
            /* the run is over: its final point, then the finish */
            c->phase = FINISHING;
            runs[c->sent_idx].final_sent = 1;
            snprintf(path, sizeof path, "/v1/runs/%ld/metrics", c->run);
            snprintf(body, sizeof body,
                     "{\"points\":[{\"step\":%ld,\"name\":\"train/loss\",\"value\":%.3f}]}",
                     steps_final, steps_final * 0.001 + (double)c->exp);
            send_req(c, E_REPORT, "POST", path, body);
            return;
        }
        c->beat++;
        c->beat_due = t + hb_s;
        snprintf(path, sizeof path, "/v1/runs/%ld/%s", c->run, c->beat % 2 ? "heartbeat" : "metrics");
        if (c->beat % 2) {
            snprintf(body, sizeof body, "{\"step\":%d}", c->step);
            send_req(c, E_HEARTBEAT, "POST", path, body);
            return;
        }
        /* a batch of 10 points, never the final step (that is the finish's) */
        size_t off = (size_t)snprintf(body, sizeof body, "{\"points\":[");
        int k;
        for (k = 0; k < 10 && c->step + 1 < steps_final; k++) {
            c->step++;
            off += (size_t)snprintf(body + off, sizeof body - off,
                                    "%s{\"step\":%d,\"name\":\"train/loss\",\"value\":%.3f}",
                                    k ? "," : "", c->step, c->step * 0.001 + (double)c->exp);
        }
        snprintf(body + off, sizeof body - off, "]}");
        runs[c->sent_idx].last = c->step;
        send_req(c, E_REPORT, "POST", path, body);
        return;
    }
    case FINISHING:
        snprintf(path, sizeof path, "/v1/runs/%ld/finish", c->run);
        send_req(c, E_FINISH, "POST", path, "{\"outcome\":\"succeeded\"}");
        return;
    case IDLE:
        return;
    }
}

/* A worker's answer, and when it acts next. */
static void worker_done(struct conn *c, int status, const char *body)
{
    double t = now();
    switch (c->pending) {
    case E_REGISTER:
        /* its first lease waits for its slot (main) */
        c->id = json_long(body, "id");
        secret_line(body, "Cod-Worker-Secret", c->wsecret, sizeof c->wsecret);
        c->phase = LEASE;
        registered++;
        return;
    case E_LEASE:
        if (status == 200) {
            c->run = json_long(body, "run");
            c->exp = json_long(body, "experiment");
            secret_line(body, "Cod-Lease-Secret", c->lsecret, sizeof c->lsecret);
            c->sent_idx = track_run(c->exp);
            c->phase = RUNNING;
            c->beat = 0;
            c->step = 0;
            c->run_started = t;
            /* runs of one length would end together, every worker's
             * finish and next lease in the same heartbeat period */
            c->run_len = run_s * (1 + spread * (2.0 * rand() / RAND_MAX - 1));
            c->beat_due = t + hb_s;
            schedule(c, c->beat_due);
        } else {
            lease_empty++;
            schedule(c, t + 1); /* the queue ran dry: ask again later */
        }
        return;
    case E_HEARTBEAT:
    case E_REPORT:
        if (status == 409) {
            /* sent on time (the timer), yet the lease was gone */
            lost_leases++;
            c->phase = LEASE;
            schedule(c, t);
            return;
        }
        if (status != 200)
            errors_other++;
        if (c->phase == FINISHING) { /* the final point is in: finish */
            worker_act(c);
            return;
        }
        /* a run ends when it ends, not at a beat: were it to wait for
         * one, its next lease and every beat after would keep the phase
         * of the first, and a fleet that started together would beat
         * together for ever */
        schedule(c, c->beat_due < c->run_started + c->run_len ? c->beat_due
                                                              : c->run_started + c->run_len);
        return;
    case E_FINISH:
        if (status == 200)
            runs[c->sent_idx].finished = 1;
        else if (status == 409)
            lost_leases++;
        else
            errors_other++;
        c->phase = LEASE;
        schedule(c, t);
        return;
    default:
        return;
    }
}

static void dashboard_act(struct conn *c)
{
    char path[128];
    long pick = n_runs ? runs[(unsigned long)rand() % (unsigned long)n_runs].exp : 1;
    switch (c->dash_stage) {
    case 0:
        send_req(c, E_LIST, "GET", "/v1/experiments?limit=50", NULL);
        break;
    case 1:
        snprintf(path, sizeof path, "/v1/experiments/%ld", pick);
        send_req(c, E_SHOW, "GET", path, NULL);
        break;
    default:
        snprintf(path, sizeof path, "/v1/experiments/%ld/metrics?name=train/loss", pick);
        send_req(c, E_CURVE, "GET", path, NULL);
        break;
    }
}

static void dashboard_done(struct conn *c, int status)
{
    if (status != 200)
        errors_other++;
    c->dash_stage = (c->dash_stage + 1) % 3;
    /* the three reads of a refresh back to back, then the next refresh */
    schedule(c, c->dash_stage ? now() : now() + dash_s);
}

static void on_event(struct conn *c, unsigned events)
{
    if ((events & EPOLLOUT) && c->out_off < c->out_len) {
        ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (w > 0)
            c->out_off += (size_t)w;
        else if (w < 0 && errno != EAGAIN) {
            fprintf(stderr, "fleet: write: %s\n", strerror(errno));
            exit(1);
        }
        if (c->out_off == c->out_len) {
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
            epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
        }
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    for (;;) {
        if (c->in_cap - c->in_len < 4096) {
            c->in_cap = c->in_cap ? 2 * c->in_cap : 8192;
            char *p = realloc(c->in, c->in_cap);
            if (!p) {
                fprintf(stderr, "fleet: out of memory\n");
                exit(1);
            }
            c->in = p;
        }
        struct iovec iov = {c->in + c->in_len, c->in_cap - 1 - c->in_len};
        union {
            char buf[CMSG_SPACE(sizeof(struct timespec))];
            struct cmsghdr align;
        } ctl;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        ssize_t r = recvmsg(c->fd, &msg, 0);
        if (r > 0) {
            c->in_len += (size_t)r;
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                c->arrived = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
            }
            continue;
        }
        if (r < 0 && errno == EAGAIN)
            break;
        fprintf(stderr, "fleet: the server closed a connection (%s)\n",
                r ? strerror(errno) : "EOF");
        exit(1);
    }
    int status;
    char *body;
    if (!c->busy || !answer_whole(c->in, c->in_len, &status, &body))
        return;
    c->busy = 0;
    double seen = wall_now();
    if (!c->arrived) {
        fprintf(stderr, "fleet: an answer without its arrival time (SO_TIMESTAMPNS)\n");
        exit(1);
    }
    lat_add(c->pending, c->arrived - c->sent_at);
    lat_push(&seen_lat[c->pending], c->pending, seen - c->sent_at);
    if (c->role == DASHBOARD)
        dashboard_done(c, status);
    else
        worker_done(c, status, body);
}

/* Queues `count` experiments over one connection of its own; -1 when one is refused. */
struct submitter {
    long count;
    int failed;
};

static void *submit_many(void *arg)
{
    struct submitter *sb = arg;
    static __thread char buf[1 << 16];
    int fd = dial(port);
    for (long i = 0; fd >= 0 && i < sb->count && !sb->failed; i++)
        sb->failed = roundtrip(fd, "POST", "/v1/experiments", spec, buf, sizeof buf, NULL) != 201;
    sb->failed |= fd < 0;
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* a counter of the server's /metrics, over a connection of its own (an idle
 * one would have been closed by the server's --conn-timeout) */
static long server_counter(const char *name)
{
    static char buf[1 << 22];
    char *body;
    int fd = dial(port);
    int st = fd >= 0 ? roundtrip(fd, "GET", "/metrics", NULL, buf, sizeof buf, &body) : -1;
    if (fd >= 0)
        close(fd);
    if (st != 200)
        return -1;
    char pat[96];
    snprintf(pat, sizeof pat, "\n%s ", name);
    char *p = strstr(body, pat);
    return p ? atol(p + strlen(pat)) : -1;
}

/* The server's counters at the start of the measure, read beside the loop:
 * read in it, they stalled it ~0.2 s, and the 400 workers whose timers fell
 * due meanwhile then reported together every 10 s for the whole run. */
struct counters {
    long commits, fsyncs;
};

static void *read_counters(void *arg)
{
    struct counters *k = arg;
    k->commits = server_counter("cod_store_commits_total");
    k->fsyncs = server_counter("cod_store_fsyncs_total");
    return NULL;
}

/* Runs the loop until `until`, or sooner once *count reaches target (count
 * NULL: never). 1 when it did. */
static int loop_until(double until, const long *count, long target)
{
    struct epoll_event evs[512];
    for (;;) {
        double t = now();
        if (count && *count >= target)
            return 1;
        if (t >= until)
            return 0;
        while (heap_n && heap[0]->next_at <= t) {
            struct conn *c = heap_pop();
            if (c->role == WORKER)
                worker_act(c);
            else
                dashboard_act(c);
        }
        double wait = heap_n ? heap[0]->next_at - t : until - t;
        if (wait > until - t)
            wait = until - t;
        int ms = wait > 0 ? (int)(wait * 1e3) + 1 : 0;
        int n = epoll_wait(epfd, evs, 512, ms);
        for (int i = 0; i < n; i++)
            on_event(evs[i].data.ptr, evs[i].events);
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench_fleet PORT SPEC_FILE WORKERS DASHBOARDS SECONDS [HEARTBEAT_S] "
                        "[DASH_S] [RUN_S] [SPREAD]\n");
        return 2;
    }
    port = atoi(argv[1]);
    int workers = atoi(argv[3]), dashboards = atoi(argv[4]);
    double seconds = atof(argv[5]);
    if (argc > 6)
        hb_s = atof(argv[6]);
    if (argc > 7)
        dash_s = atof(argv[7]);
    if (argc > 8)
        run_s = atof(argv[8]);
    if (argc > 9)
        spread = atof(argv[9]);
    size_t sl = read_spec(argv[2], spec, sizeof spec);
    char *st = strstr(spec, "\"steps\":");
    steps_final = st ? atol(st + 8) : 0;
    if (!sl || steps_final < 12 || workers < 1 || dashboards < 0 || seconds <= 0 || spread < 0 ||
        spread >= 1) {
        fprintf(stderr, "fleet: a spec with train.steps >= 12, WORKERS >= 1, SECONDS > 0, 0 <= SPREAD < 1\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* enough experiments that no worker runs dry, every run the shortest */
    long n_exp = (long)(workers * (1 + (seconds + 2 * hb_s) / (run_s * (1 - spread)))) +
                 workers / 10 + 10;
    enum { SUBMITTERS = 32 };
    struct submitter sb[SUBMITTERS];
    pthread_t th[SUBMITTERS];
    double t0 = now();
    for (int i = 0; i < SUBMITTERS; i++) {
        sb[i] = (struct submitter){n_exp / SUBMITTERS + 1, 0};
        pthread_create(&th[i], NULL, submit_many, &sb[i]);
    }
    int refused = 0;
    for (int i = 0; i < SUBMITTERS; i++) {
        pthread_join(th[i], NULL);
        refused |= sb[i].failed;
    }
    if (refused) {
        fprintf(stderr, "fleet: a submission was refused\n");
        return 1;
    }
    n_exp = (n_exp / SUBMITTERS + 1) * SUBMITTERS;
    printf("queued %ld experiments in %.1f s (%d connections)\n", n_exp, now() - t0, SUBMITTERS);

    n_conns = workers + dashboards;
    conns = calloc((size_t)n_conns, sizeof *conns);
    heap = calloc((size_t)n_conns, sizeof *heap);
    epfd = epoll_create1(0);
    if (!conns || !heap || epfd < 0) {
        fprintf(stderr, "fleet: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n_conns; i++) {
        struct conn *c = &conns[i];
        c->role = i < workers ? WORKER : DASHBOARD;
        c->fd = dial(port);
        if (c->fd < 0) {
            fprintf(stderr, "fleet: cannot open connection %d (ulimit -n?)\n", i);
            return 1;
        }
        fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
        int one = 1;
        if (setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
            fprintf(stderr, "fleet: SO_TIMESTAMPNS: %s\n", strerror(errno));
            return 1;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
        c->phase = REGISTER;
        if (c->role == WORKER)
            schedule(c, now());
    }
    /* Every worker registered before any leases: the server accepts 10,000
     * new connections slowly, and workers that leased as their registration
     * came back would start a third of the fleet within the same 0.4 s and
     * keep it beating together, 9,000 beats/s for 0.4 s of every 5 s. */
    if (!loop_until(now() + 120, &registered, workers)) {
        fprintf(stderr, "fleet: %ld of %d workers registered in 120 s\n", registered, workers);
        return 1;
    }
    /* first leases spread over a heartbeat period, dashboards over theirs */
    double t1 = now();
    for (int i = 0; i < n_conns; i++)
        schedule(&conns[i], i < workers ? t1 + hb_s * i / workers
                                        : t1 + dash_s * (i - workers) / (dashboards ? dashboards : 1));
    /* a warm-up period: first leases, the spread settling */
    loop_until(t1 + 2 * hb_s, NULL, 0);
    struct counters k0;
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_counters, &k0) != 0) {
        fprintf(stderr, "fleet: cannot start a thread\n");
        return 1;
    }
    long lost0 = lost_leases, other0 = errors_other;
    measuring = 1;
    double m0 = now();
    loop_until(m0 + seconds, NULL, 0);
    measuring = 0;
    double dt = now() - m0;
    pthread_join(reader, NULL);
    long commits = server_counter("cod_store_commits_total") - k0.commits,
         fsyncs = server_counter("cod_store_fsyncs_total") - k0.fsyncs;
    printf("%d workers (a beat every %.0f s, runs of %.0f s ± %.0f %%), %d dashboards (every %.0f s), "
           "%.0f s measured\n",
           workers, hb_s, run_s, spread * 100, dashboards, dash_s, dt);
    printf("%-32s %9s %9s %9s %9s %9s %11s\n", "endpoint", "req/s", "p50 ms", "p99 ms", "p999 ms",
           "count", "loop p99 ms");
    long total = 0;
    for (int e = 0; e < N_EP; e++) {
        struct lat *l = &lat[e];
        if (!l->n || e == E_CHECK)
            continue;
        struct lat *sl = &seen_lat[e];
        qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_double);
        qsort(sl->v, (size_t)sl->n, sizeof *sl->v, cmp_double);
        printf("%-32s %9.0f %9.2f %9.2f %9.2f %9ld %11.2f\n", ep_name[e], l->n / dt,
               l->v[l->n / 2] * 1e3, l->v[(long)(l->n * 0.99)] * 1e3,
               l->v[(long)(l->n * 0.999)] * 1e3, l->n, sl->v[(long)(sl->n * 0.99)] * 1e3);
        total += l->n;
    }
    printf("all: %.0f requests/s; server: %.0f commits/s, %.0f fsyncs/s\n", total / dt,
           commits / dt, fsyncs / dt);
    printf("leases lost: %ld; other errors: %ld; lease asked of an empty queue: %ld\n",
           lost_leases - lost0, errors_other - other0, lease_empty);

    /* every finished run's curve, as the server holds it */
    int ctl = dial(port);
    long checked = 0, missing = 0, differ = 0;
    static char big[1 << 20];
    for (long i = 0; i < n_runs; i++) {
        if (!runs[i].finished)
            continue;
        char path[128], *body;
        snprintf(path, sizeof path, "/v1/experiments/%ld/metrics?name=train/loss&every=1",
                 runs[i].exp);
        double a = now();
        if (roundtrip(ctl, "GET", path, NULL, big, sizeof big, &body) != 200) {
            missing += runs[i].last + runs[i].final_sent;
            continue;
        }
        lat_add(E_CHECK, now() - a);
        checked++;
        /* [[step,value],...]: steps 1..last and the final one, once each, with their values */
        int seen = 0, want = runs[i].last + runs[i].final_sent;
        for (char *p = strstr(body, "[["); p && (p = strchr(p + 1, '[')); p++) {
            long step = atol(p + 1);
            char *comma = strchr(p, ',');
            double v = comma ? atof(comma + 1) : -1, d = v - (step * 0.001 + (double)runs[i].exp);
            seen++;
            if (!((step >= 1 && step <= runs[i].last) || step == steps_final) || d * d > 1e-6)
                differ++;
        }
        if (seen < want)
            missing += want - seen;
        if (seen > want)
            differ += seen - want;
    }
    if (ctl >= 0)
        close(ctl);
    printf("curves checked: %ld finished runs; points missing: %ld, doubled or wrong: %ld\n",
           checked, missing, differ);
    return lost_leases - lost0 || missing || differ ? 1 : 0;
}
