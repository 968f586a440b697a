/* The store on a failing disk (tests/faulty_vfs.h under the real store): a
 * write or fsync that fails (ENOSPC, EIO), a write torn in the middle of a
 * commit, a read that fails, and a lock another connection holds fail the request as an
 * outage (store_unavailable_since: the API's 503), never as the store's
 * own error; nothing acknowledged is lost, nothing half-written is seen,
 * not even in the files a crash would leave, and the store goes on once
 * the disk does, without being reopened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "schema/store.h"
#include "views/experiment.h"
#include "tests/check.h"
#include "tests/faulty_vfs.h"

static char dir[64];

static struct store *open_at(const char *name)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct store *st = NULL;
    if (store_open(path, 2, &st, err, sizeof err) != 0)
        fprintf(stderr, "store_open %s: %s\n", path, err);
    return st;
}

static int create(struct store *st, const char *name, int64_t *id)
{
    struct new_experiment e = {.name = name, .model = "llama-9m", .norm = "pre", .device = "cpu",
                               .spec_json = "{}", .gpus = 1, .priority = 0, .max_attempts = 2,
                               .steps = 100};
    int replayed;
    return store_create_experiment(st, &e, NULL, id, &replayed);
}

/* The names of the experiments, oldest first, comma-separated. */
static const char *names(struct store *st, char *buf, size_t n)
{
    struct exp_filter f = {.limit = 1000};
    json_t *o;
    snprintf(buf, n, "?");
    if (views_experiments(st, &f, &o) != ST_OK)
        return buf;
    json_t *list = json_object_get(o, "experiments");
    buf[0] = 0;
    for (size_t i = json_array_size(list); i-- > 0;) {
        size_t at = strlen(buf);
        snprintf(buf + at, n - at, "%s%s", at ? "," : "",
                 json_string_value(json_object_get(json_array_get(list, i), "name")));
    }
    json_decref(o);
    return buf;
}

/* Every scalar point of an experiment, or -1. */
static long points(struct store *st, int64_t exp)
{
    json_t *o;
    if (store_metrics(st, exp, NULL, 0, 1000000, 1, &o) != ST_OK)
        return -1;
    long n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(o, "series"), k, v) n += (long)json_array_size(v);
    json_decref(o);
    return n;
}

static int sound(struct store *st)
{
    char v[64] = "";
    return st && store_integrity(st, v, sizeof v) == 0 && !strcmp(v, "ok");
}

/* The failure right after `since` is an outage, and SQLite's words are `want`. */
static int outage(struct store *st, double since, const char *want)
{
    char why[128] = "";
    int seen = store_unavailable_since(st, since, why, sizeof why);
    if (!seen || strcmp(why, want))
        fprintf(stderr, "  outage: %d \"%s\", want \"%s\"\n", seen, why, want);
    return seen && !strcmp(why, want);
}

/* A commit that fails (ops failing with err): the write fails as an
 * outage in SQLite's `words` and is not seen; what was acknowledged
 * before is; once the disk works the same store writes again, and a
 * reopened store holds exactly what was acknowledged. */
static void a_failed_commit(const char *db, int ops, int err, const char *words)
{
    struct store *st = open_at(db);
    int64_t a, b, c;
    char buf[256];
    CHECK(st && create(st, "a", &a) == ST_OK && create(st, "b", &b) == ST_OK, "a and b");
    faulty_vfs_fail(ops, err, 0, -1);
    double since = store_now();
    CHECK(create(st, "lost", &c) == ST_ERROR, "the commit fails");
    CHECK(outage(st, since, words), "as an outage");
    CHECK(!strcmp(names(st, buf, sizeof buf), "a,b"), "reads go on, without it: %s", buf);
    faulty_vfs_clear();
    since = store_now();
    CHECK(create(st, "c", &c) == ST_OK, "the disk mended: the store writes");
    CHECK(!store_unavailable_since(st, since, buf, sizeof buf), "and is no longer unavailable");
    store_close(st);
    st = open_at(db);
    CHECK(sound(st), "reopened: integrity ok");
    CHECK(!strcmp(names(st, buf, sizeof buf), "a,b,c"), "exactly what was acknowledged: %s", buf);
    store_close(st);
}

/* A full disk: every write of the WAL refused. */
static void a_full_disk(void)
{
    a_failed_commit("full.db", FAULTY_WRITE, ENOSPC, "database or disk is full");
}

/* A dying disk: the commit's fsync fails. */
static void a_failing_fsync(void)
{
    a_failed_commit("fsync.db", FAULTY_SYNC, EIO, "disk I/O error");
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* What a kill -9 right now would leave: the database and its WAL as they
 * are in the files (the shared-memory index is rebuilt from the WAL). */
static int crash_copy(const char *from, const char *to)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/%s", dir, from);
    snprintf(b, sizeof b, "%s/%s", dir, to);
    if (copy_file(a, b) != 0)
        return -1;
    snprintf(a, sizeof a, "%s/%s-wal", dir, from);
    snprintf(b, sizeof b, "%s/%s-wal", dir, to);
    return copy_file(a, b);
}

static long wal_size(const char *name)
{
    char path[128];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s-wal", dir, name);
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

enum { BATCH = 4000 };

/* A commit torn in the middle: the disk fills up after the first frames
 * of a large batch of points are in the WAL. None of the batch is seen,
 * in the running store or in what a crash would leave; the points
 * acknowledged before are all there; the retried batch is stored whole. */
static void a_commit_torn_midway(void)
{
    struct store *st = open_at("torn.db");
    int64_t exp, worker, run = 0;
    struct lease lease = {0};
    struct lease_policy p = {600, store_now(), 600};
    int formed;
    CHECK(st && create(st, "torn", &exp) == ST_OK &&
              store_register_worker(st, "w", "cpu", 1, "h", &worker, NULL) == ST_OK &&
              store_lease(st, worker, &p, &lease, &formed, NULL) == ST_OK && lease.spec,
          "a leased run");
    run = lease.run;
    lease_free(&lease);
    static struct metric_point early[10], batch[BATCH];
    for (int i = 0; i < 10; i++)
        early[i] = (struct metric_point){"train/loss", i + 1, -1, 5.0 - i * 0.1, 0};
    for (int i = 0; i < BATCH; i++)
        batch[i] = (struct metric_point){"train/loss", 11 + i, -1, 4.0 - i * 1e-4, 0};
    CHECK(store_report(st, run, early, 10, NULL, 0) == ST_OK, "ten points acknowledged");
    long before = faulty_vfs_failed(), wal_before = wal_size("torn.db");
    /* the commit writes each frame's header and page: past ten of them */
    faulty_vfs_fail(FAULTY_WRITE, ENOSPC, 10, 1);
    double since = store_now();
    CHECK(store_report(st, run, batch, BATCH, NULL, 0) == ST_ERROR, "the torn batch fails");
    CHECK(faulty_vfs_failed() == before + 1, "one write failed, mid-commit");
    CHECK(wal_size("torn.db") > wal_before, "the WAL holds the frames written before it: %ld > %ld",
          wal_size("torn.db"), wal_before);
    CHECK(outage(st, since, "database or disk is full"), "as an outage");
    CHECK(points(st, exp) == 10, "none of it is seen: %ld points", points(st, exp));
    CHECK(crash_copy("torn.db", "crashed.db") == 0, "the files a crash would leave");
    struct store *crashed = open_at("crashed.db");
    CHECK(sound(crashed), "after the crash: integrity ok");
    CHECK(crashed && points(crashed, exp) == 10, "after the crash: the ten points, none of the batch: %ld",
          crashed ? points(crashed, exp) : -1);
    store_close(crashed);
    CHECK(store_report(st, run, batch, BATCH, NULL, 0) == ST_OK, "the batch again: stored");
    CHECK(points(st, exp) == 10 + BATCH, "all of it: %ld", points(st, exp));
    store_close(st);
    st = open_at("torn.db");
    CHECK(sound(st) && points(st, exp) == 10 + BATCH, "reopened: all of it, sound");
    store_close(st);
}

/* Another connection (an sqlite3 shell, say) holds the write lock: a write
 * waits the lock timeout, then fails as an outage; reads go on (WAL); the
 * write succeeds once the lock is let go. */
static void a_lock_held_elsewhere(void)
{
    struct store *st = open_at("locked.db");
    int64_t a, b;
    char path[128], buf[256];
    CHECK(st && create(st, "a", &a) == ST_OK, "a");
    snprintf(path, sizeof path, "%s/locked.db", dir);
    sqlite3 *other = NULL;
    CHECK(sqlite3_open(path, &other) == SQLITE_OK &&
              sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
          "the other connection holds the write lock");
    store_set_lock_timeout(st, 0.2);
    double since = store_now();
    CHECK(create(st, "b", &b) == ST_ERROR, "a write waits the lock timeout, then fails");
    CHECK(store_now() - since >= 0.2, "after waiting %.3f s", store_now() - since);
    CHECK(outage(st, since, "database is locked"), "as an outage");
    CHECK(!strcmp(names(st, buf, sizeof buf), "a"), "reads go on: %s", buf);
    CHECK(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL) == SQLITE_OK, "the lock let go");
    CHECK(create(st, "b", &b) == ST_OK, "the write succeeds");
    sqlite3_close(other);
    store_close(st);
}

/* A disk that fails reads: a read fails as an outage, and reads again
 * once the disk does. */
static void a_failing_read(void)
{
    struct store *st = open_at("read.db");
    int64_t a;
    char buf[256];
    CHECK(st && create(st, "a", &a) == ST_OK, "a");
    store_close(st);
    st = open_at("read.db"); /* its readers have read nothing yet */
    faulty_vfs_fail(FAULTY_READ, EIO, 0, -1);
    double since = store_now();
    CHECK(!strcmp(names(st, buf, sizeof buf), "?"), "a read on a failing disk fails: %s", buf);
    CHECK(outage(st, since, "disk I/O error"), "as an outage");
    faulty_vfs_clear();
    CHECK(!strcmp(names(st, buf, sizeof buf), "a"), "the disk mended: it reads: %s", buf);
    store_close(st);
}

/* A failure of the store's own (here a NOT NULL column left empty) is no
 * outage: the API answers it 500, not 503. */
static void the_store_own_errors_are_not_outages(void)
{
    struct store *st = open_at("own.db");
    int64_t id;
    char why[128];
    double since = store_now();
    CHECK(st && create(st, NULL, &id) == ST_ERROR, "a row without its name is refused");
    CHECK(!store_unavailable_since(st, since, why, sizeof why), "not an outage: %s", why);
    store_close(st);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/cod-store-faults-XXXXXX");
    if (!mkdtemp(dir) || faulty_vfs_install() != 0) {
        perror("setup");
        return 1;
    }
    RUN(a_full_disk);
    RUN(a_failing_fsync);
    RUN(a_commit_torn_midway);
    RUN(a_lock_held_elsewhere);
    RUN(a_failing_read);
    RUN(the_store_own_errors_are_not_outages);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    CHECK_EXIT();
}
