/* cod-server in-process for the fuzz harnesses: see http_driver.h. */
#include "tests/fuzz/http_driver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "api/server.h"
#include "common/fileio.h"
#include "tests/fuzz/fuzz_util.h"

/* Long enough never to lapse while a harness runs: nothing reaps here. */
#define LEASE_S (365.0 * 86400)
/* A request unanswered for this long is a hang. */
#define ANSWER_S 20

static struct app app;
static struct api_server *srv;
static int port;
static char db_path[300];
static unsigned char *fixture;
static int trace;  /* COD_FUZZ_TRACE=1: each request and its answer on stderr */
static size_t fixture_len;
/* The secrets answers gave (register: a worker's; lease: a run's rank's),
 * which the driver's requests carry as a worker does (docs/api.md), unless
 * an input names its own; ids past these go without. */
enum { MAX_IDS = 64, MAX_RANKS = 8, SECRET = 33 };
static char worker_secret[MAX_IDS][SECRET], lease_secret[MAX_IDS][MAX_RANKS][SECRET];

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = 2 * (b->n + n) + 64;
        char *q = realloc(b->p, cap);
        if (!q)
            fuzz_die("out of memory");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/* Header lines whose name frames the message: the driver writes its own. */
static int framing(const char *line, size_t n)
{
    static const char *const names[] = {"content-length", "transfer-encoding", "connection",
                                        "host", "expect", "upgrade"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t k = strlen(names[i]);
        if (n > k && line[k] == ':' && !strncasecmp(line, names[i], k))
            return 1;
    }
    return 0;
}

static void put_headers(struct buf *b, const char *h, size_t n)
{
    while (n) {
        const char *eol = memchr(h, '\n', n);
        size_t len = eol ? (size_t)(eol - h) : n, line = len;
        if (line && h[line - 1] == '\r')
            line--;
        const char *colon = memchr(h, ':', line);
        /* a line starting with white space would continue the one before (obsolete folding) */
        int clean = colon && colon > h && *h != ' ' && *h != '\t' && !memchr(h, '\r', line) &&
                    !memchr(h, 0, line) && !framing(h, line);
        if (clean) {
            put(b, h, line);
            puts_(b, "\r\n");
        }
        h += len + (eol != NULL);
        n -= len + (eol != NULL);
    }
}

static void die_request(const char *why, const char *request, size_t n, const char *reply)
{
    fuzz_die("%s\n--- request ---\n%.*s\n--- reply ---\n%s", why, (int)(n > 4000 ? 4000 : n),
             request, reply ? reply : "(none)");
}

/* The status of a reply, after the oracle's checks. */
static int judge(const char *method, const struct buf *req, const struct buf *rep)
{
    int status = 0;
    if (rep->n == 0 || sscanf(rep->p, "HTTP/1.%*d %d", &status) != 1)
        die_request("no answer", req->p, req->n, rep->p);
    if (status >= 500)
        die_request("a 5xx answer", req->p, req->n, rep->p);
    const char *head_end = strstr(rep->p, "\r\n\r\n");
    if (!head_end)
        die_request("an answer without a complete head", req->p, req->n, rep->p);
    const char *body = head_end + 4;
    size_t blen = rep->n - (size_t)(body - rep->p);
    int is_json = memmem(rep->p, (size_t)(head_end - rep->p), "\r\nContent-Type: application/json",
                         31) != NULL;
    if (is_json && blen && strcmp(method, "HEAD")) {
        json_error_t je;
        json_t *j = json_loadb(body, blen, 0, &je);
        if (!j)
            die_request("a JSON answer that is not JSON", req->p, req->n, rep->p);
        json_decref(j);
    }
    return status;
}

/* Does the header block h (n bytes) hold a line named name? */
static int has_header(const char *h, size_t n, const char *name)
{
    size_t k = strlen(name);
    if (!h)
        return 0;
    for (const char *p = h, *end = h + n; p && p < end;) {
        if ((size_t)(end - p) > k && p[k] == ':' && !strncasecmp(p, name, k))
            return 1;
        p = memchr(p, '\n', (size_t)(end - p));
        p = p ? p + 1 : NULL;
    }
    return 0;
}

/* The id after prefix in the target's path, or -1. */
static long path_id(const char *target, size_t tlen, const char *prefix)
{
    size_t k = strlen(prefix);
    if (tlen <= k || strncmp(target, prefix, k))
        return -1;
    long id = 0;
    size_t i = k;
    for (; i < tlen && target[i] >= '0' && target[i] <= '9' && id < MAX_IDS; i++)
        id = id * 10 + (target[i] - '0');
    return i > k && id < MAX_IDS ? id : -1;
}

/* The digits at p, before end (neither input is NUL-terminated), as a rank. */
static int digits(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    int r = 0;
    for (; p < end && *p >= '0' && *p <= '9' && r < MAX_RANKS; p++)
        r = r * 10 + (*p - '0');
    return r < MAX_RANKS ? r : 0;
}

/* The rank a run's call speaks for: its query's "rank=", its body's, or 0. */
static int call_rank(const char *target, size_t tlen, const char *body, size_t blen)
{
    const char *q = memmem(target, tlen, "rank=", 5), *b = memmem(body, blen, "\"rank\":", 7);
    return q ? digits(q + 5, target + tlen) : b ? digits(b + 7, body + blen) : 0;
}

/* The secret line the request's target needs, as a worker sends it. */
static void put_secret(struct buf *b, const char *target, size_t tlen, const char *body,
                       size_t blen)
{
    long w = path_id(target, tlen, "/v1/workers/"), r = path_id(target, tlen, "/v1/runs/");
    const char *s = w > 0 ? worker_secret[w]
                    : r > 0 ? lease_secret[r][call_rank(target, tlen, body, blen)]
                            : "";
    if (!*s)
        return;
    puts_(b, w > 0 ? "Cod-Worker-Secret: " : "Cod-Lease-Secret: ");
    puts_(b, s);
    puts_(b, "\r\n");
}

/* Keeps the secrets of an answer to register or lease. */
static void keep_secrets(const char *target, size_t tlen, const struct buf *rep, int status)
{
    const char *body = strstr(rep->p, "\r\n\r\n");
    if (!body || (status != 200 && status != 201))
        return;
    json_t *j = json_loads(body + 4, 0, NULL);
    const char *s = json_string_value(json_object_get(j, "secret"));
    long id = -1;
    int rank = 0;
    if (s && tlen == strlen("/v1/workers/register") && !strncmp(target, "/v1/workers/register", tlen)) {
        id = (long)json_integer_value(json_object_get(j, "id"));
        if (id > 0 && id < MAX_IDS)
            snprintf(worker_secret[id], SECRET, "%s", s);
    } else if (s && path_id(target, tlen, "/v1/workers/") > 0 && memmem(target, tlen, "/lease", 6)) {
        id = (long)json_integer_value(json_object_get(j, "run"));
        rank = (int)json_integer_value(json_object_get(j, "rank"));
        if (id > 0 && id < MAX_IDS && rank >= 0 && rank < MAX_RANKS)
            snprintf(lease_secret[id][rank], SECRET, "%s", s);
    }
    json_decref(j);
}

/* connect(), riding out libFuzzer's SIGALRM: an interrupted connect goes on
 * by itself, and says how it ended once the socket is writable. */
static int connect_to(int fd, const struct sockaddr_in *a)
{
    if (connect(fd, (const struct sockaddr *)a, sizeof *a) == 0)
        return 0;
    if (errno != EINTR)
        return -1;
    struct pollfd p = {fd, POLLOUT, 0};
    while (poll(&p, 1, -1) < 0)
        if (errno != EINTR)
            return -1;
    int e = 0;
    socklen_t len = sizeof e;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
        return -1;
    errno = e;
    return e ? -1 : 0;
}

int http_request(const char *method, size_t mlen, const char *target, size_t tlen,
                 const char *headers, size_t hlen, const char *body, size_t blen)
{
    struct buf req = {0}, rep = {0};
    char m[16];
    size_t k = 0;
    for (size_t i = 0; i < mlen && k < sizeof m - 1; i++)
        if (method[i] > ' ' && method[i] < 0x7f)
            m[k++] = method[i];
    m[k] = 0;
    if (!k)
        snprintf(m, sizeof m, "GET");
    puts_(&req, m);
    puts_(&req, " ");
    if (!tlen)
        puts_(&req, "/");
    for (size_t i = 0; i < tlen; i++) {
        unsigned char c = (unsigned char)target[i];
        char esc[4];
        if (c > ' ' && c < 0x7f) {
            put(&req, &target[i], 1);
        } else {
            snprintf(esc, sizeof esc, "%%%02X", c);
            puts_(&req, esc);
        }
    }
    puts_(&req, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    put_headers(&req, headers, hlen);
    if (!has_header(headers, hlen, "Content-Type"))
        puts_(&req, "Content-Type: application/json\r\n");
    if (!has_header(headers, hlen, "Cod-Worker-Secret") && !has_header(headers, hlen, "Cod-Lease-Secret"))
        put_secret(&req, target, tlen, body, blen);
    char cl[48];
    snprintf(cl, sizeof cl, "Content-Length: %zu\r\n\r\n", blen);
    puts_(&req, cl);
    put(&req, body, blen);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {ANSWER_S, 0};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        connect_to(fd, &a) != 0)
        fuzz_die("cannot connect to 127.0.0.1:%d: %s", port, strerror(errno));
    for (size_t off = 0; off < req.n;) {
        ssize_t w = send(fd, req.p + off, req.n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;  /* the server may refuse before reading it all: judged by its answer */
        off += (size_t)w;
    }
    char chunk[8192];
    for (;;) {
        ssize_t r = recv(fd, chunk, sizeof chunk, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            die_request("no answer within the time limit (a hang)", req.p, req.n, rep.p);
        if (r <= 0)
            break;
        put(&rep, chunk, (size_t)r);
    }
    close(fd);
    int status = judge(m, &req, &rep);
    keep_secrets(target, tlen, &rep, status);
    if (trace) {
        const char *body_start = strstr(rep.p, "\r\n\r\n");
        fprintf(stderr, "%.*s -> %d %.2000s\n", (int)strcspn(req.p, "\r"), req.p, status,
                body_start ? body_start + 4 : "");
    }
    free(req.p);
    free(rep.p);
    return status;
}

static void open_store(void)
{
    char err[512];
    if (store_open(db_path, 2, &app.store, err, sizeof err) != 0)
        fuzz_die("store_open: %s", err);
}

/* A request of the fixture, which must get the status it expects. */
static void setup(const char *method, const char *target, const char *token, int want,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void setup(const char *method, const char *target, const char *token, int want,
                  const char *fmt, ...)
{
    char body[2048], auth[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s\n", token);
    int got = http_request(method, strlen(method), target, strlen(target), auth, strlen(auth), body,
                           strlen(body));
    if (got != want)
        fuzz_die("fixture: %s %s: %d, not %d", method, target, got, want);
}

void http_start(void)
{
    if (srv)
        return;
    trace = getenv("COD_FUZZ_TRACE") != NULL;
    const char *data = fuzz_data_dir();
    fuzz_path(db_path, sizeof db_path, "cod.db");
    memset(&app, 0, sizeof app);
    app_init(&app);
    open_store();
    app.token = FUZZ_CLIENT_TOKEN;
    app.worker_token = FUZZ_WORKER_TOKEN;
    app.lease_s = LEASE_S;
    app.long_poll_max_s = 0;  /* a lease or rendezvous with nothing to give answers at once */
    app.request_deadline_s = ANSWER_S;
    app.max_body = 1 << 20;
    static const char *roots[1];
    roots[0] = data;
    app.submit = (struct submit_rules){.max_gang = 8, .max_cells = 64, .max_axes = 32,
                                       .max_model_gib = 288, .roots = {roots, 1, 1000}};
    app.rendezvous_s = LEASE_S;
    char err[512];
    int fd = api_listen("127.0.0.1", 0, &port, err, sizeof err);
    struct api_options o = {.host = "127.0.0.1", .threads = 2, .write_threads = 4,
                            .conn_limit = 256, .conn_timeout_s = ANSWER_S,
                            .header_deadline_s = ANSWER_S};
    if (fd < 0 || api_start(&app, &o, fd, &srv, err, sizeof err) != 0)
        fuzz_die("%s", err);

    char spec[1024];
    snprintf(spec, sizeof spec,
             "\"model\": {\"dim\": 16, \"n_layers\": 2, \"n_heads\": 2, \"ffn_dim\": 32}, "
             "\"data\": {\"train\": \"%s/train_*.bin\", \"val\": \"%s/val_*.bin\"}, "
             "\"train\": {\"steps\": 4, \"seq_len\": 8, \"batch_seqs\": 2}",
             data, data);
    const char *C = FUZZ_CLIENT_TOKEN, *W = FUZZ_WORKER_TOKEN;
    setup("POST", "/v1/workers/register", W, 201,
          "{\"name\": \"host-a/w1\", \"device\": \"cpu\", \"capacity\": 1}");
    setup("POST", "/v1/workers/register", W, 201,
          "{\"name\": \"w2\", \"device\": \"cuda:0\", \"host\": \"host-b\"}");
    setup("POST", "/v1/experiments", C, 201, "{\"name\": \"one\", %s, \"resources\": {\"device\": \"cpu\"}}",
          spec);
    setup("POST", "/v1/workers/1/lease", W, 200, "{\"wait\": 0}");
    setup("POST", "/v1/runs/1/metrics", W, 200,
          "{\"points\": [{\"step\": 0, \"name\": \"train/loss\", \"value\": 5.5}, "
          "{\"step\": 0, \"name\": \"layer/out_var\", \"layer\": 1, \"value\": 0.5}, "
          "{\"step\": 2, \"name\": \"layer/out_var\", \"layer\": 2, \"value\": 0.25}, "
          "{\"step\": 2, \"name\": \"eval/ppl\", \"value\": null}], "
          "\"logs\": [{\"seq\": 1, \"line\": \"step 0\"}, {\"seq\": 2, \"line\": \"step 2\"}]}");
    setup("POST", "/v1/runs/1/heartbeat", W, 200, "{\"step\": 2}");
    setup("POST", "/v1/sweeps", C, 201,
          "{\"name\": \"norms\", \"base\": {%s, \"resources\": {\"device\": \"cpu\"}}, "
          "\"grid\": {\"norm\": [\"pre\", \"lns\"]}}",
          spec);
    setup("POST", "/v1/experiments/3/cancel", C, 202, "%s", "");
    setup("POST", "/v1/experiments", C, 201, "{\"name\": \"gpu\", %s, \"resources\": {\"device\": \"cuda\"}}",
          spec);
    setup("POST", "/v1/workers/2/lease", W, 200, "%s", "");

    store_close(app.store);
    char err2[512];
    if (fio_read_file(db_path, &fixture, &fixture_len, err2, sizeof err2) != 0)
        fuzz_die("%s", err2);
    open_store();
}

void http_reset(void)
{
    store_close(app.store);
    char side[320];
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", db_path, suffixes[i]);
        if (unlink(side) != 0 && errno != ENOENT)
            fuzz_die("unlink %s: %s", side, strerror(errno));
    }
    fuzz_write(db_path, fixture, fixture_len);
    open_store();
}
