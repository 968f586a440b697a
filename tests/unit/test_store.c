/* The store against a temporary SQLite file: migrations, the queue's state
 * machine, leases that are never granted twice, the reaper, idempotent
 * metric writes, and refusal of reports from a run that lost its lease. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "schema/store.h"
#include "views/experiment.h"
#include "views/workers.h"
#include "tests/check.h"

static char dir[64];

static struct store *open_fresh(const char *name)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct store *st = NULL;
    if (store_open(path, 2, &st, err, sizeof err) != 0)
        fprintf(stderr, "store_open: %s\n", err);
    return st;
}

static struct new_experiment exp_row(const char *device, int priority)
{
    return (struct new_experiment){.name = "t", .model = "llama-9m", .norm = "pre",
                                   .device = device, .spec_json = "{\"name\":\"t\"}", .gpus = 1,
                                   .priority = priority, .max_attempts = 2, .steps = 100};
}

/* An experiment's string field as the store answers it: "?" when there is
 * no such experiment, "(none)" when the field is null. */
static const char *field_of(struct store *st, int64_t id, const char *key, char *buf, size_t n)
{
    json_t *o;
    if (views_experiment(st, id, &o) != ST_OK)
        return "?";
    const char *v = json_string_value(json_object_get(o, key));
    snprintf(buf, n, "%s", v ? v : "(none)");
    json_decref(o);
    return buf;
}

static const char *state_of(struct store *st, int64_t id, char *buf, size_t n)
{
    return field_of(st, id, "state", buf, n);
}

static int64_t lease_exp(json_t *l, const char *key)
{
    return l ? (int64_t)json_integer_value(json_object_get(l, key)) : 0;
}

/* The lease's numbers as an object, NULL for none; its spec must be
 * the experiment's as submitted. */
static int lease(struct store *st, int64_t worker, double lease_s, json_t **out)
{
    struct lease_policy p = {lease_s, store_now() + 30, 600};
    int formed;
    struct lease l;
    int rc = store_lease(st, worker, &p, &l, &formed, NULL);
    *out = NULL;
    if (l.spec) {
        CHECK(!strcmp(l.spec, "{\"name\":\"t\"}"), "the lease carries the stored spec: %s", l.spec);
        *out = json_pack("{s:I,s:I,s:i}", "run", (json_int_t)l.run, "experiment",
                         (json_int_t)l.experiment, "attempt", l.attempt);
        lease_free(&l);
    }
    return rc;
}

static int finish(struct store *st, int64_t run, const char *outcome, const char *reason,
                  long points, struct points_held *held)
{
    struct finish f = {run, 0, outcome, reason, points, 0};
    int64_t worker;
    return store_finish(st, &f, held, &worker);
}

static void migrations_are_idempotent(void)
{
    struct store *st = open_fresh("m.db");
    CHECK(st != NULL, "first open");
    store_close(st);
    st = open_fresh("m.db");
    CHECK(st != NULL, "reopen applies nothing twice");
    char v[64] = "";
    CHECK(st && store_integrity(st, v, sizeof v) == 0 && !strcmp(v, "ok"), "integrity %s", v);
    store_close(st);
}

static int sql(const char *path, const char *text)
{
    sqlite3 *db;
    int rc = sqlite3_open(path, &db) == SQLITE_OK &&
             sqlite3_exec(db, text, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(db);
    return rc;
}

/* The runs' members as "run:active" pairs, in run order. */
static void members(const char *path, char *buf, size_t n)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    buf[0] = 0;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT run_id, active FROM run_members ORDER BY run_id", -1, &s,
                           NULL) == SQLITE_OK) {
        while (sqlite3_step(s) == SQLITE_ROW)
            snprintf(buf + strlen(buf), n - strlen(buf), "%d:%d ", sqlite3_column_int(s, 0),
                     sqlite3_column_int(s, 1));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

/* Migration 4 on a database of version 3, whose members carry no active
 * flag: the members of runs that ended are marked so and those of running
 * ones are not; from then on the trigger keeps the flag, and a worker's
 * capacity counts only the runs it holds. */
static void migration_marks_held_runs(void)
{
    char path[128], got[128];
    snprintf(path, sizeof path, "%s/m4.db", dir);
    struct store *st = open_fresh("m4.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t a, b, c, w;
    int rep;
    json_t *l;
    CHECK(store_create_experiment(st, &e, NULL, &a, &rep) == ST_OK &&
              store_create_experiment(st, &e, NULL, &b, &rep) == ST_OK &&
              store_create_experiment(st, &e, NULL, &c, &rep) == ST_OK &&
              store_register_worker(st, "w", "cpu", 1, "h", &w, NULL) == ST_OK,
          "three queued, a worker of capacity 1");
    lease(st, w, 60, &l);
    int64_t first = lease_exp(l, "run");
    json_decref(l);
    CHECK(finish(st, first, "failed", "x", 0, NULL) == ST_OK, "the first run ends");
    lease(st, w, 60, &l);
    int64_t second = lease_exp(l, "run");
    json_decref(l);
    store_close(st);
    CHECK(sql(path, "ALTER TABLE workers DROP COLUMN secret; ALTER TABLE run_members DROP COLUMN secret;"
                    " DROP INDEX runs_rendezvous_due;"
                    " DROP TRIGGER run_members_ended; DROP INDEX run_members_held;"
                    " DROP INDEX run_members_untold; ALTER TABLE run_members DROP COLUMN active;"
                    " CREATE INDEX run_members_worker ON run_members (worker_id);"
                    " PRAGMA user_version = 3;"),
          "the database taken back to version 3");
    st = open_fresh("m4.db");
    CHECK(st != NULL, "migration 4 applies");
    char want[64];
    members(path, got, sizeof got);
    snprintf(want, sizeof want, "%lld:0 %lld:1 ", (long long)first, (long long)second);
    CHECK(!strcmp(got, want), "the ended run's member inactive, the running one's active: %s", got);
    CHECK(lease(st, w, 60, &l) == ST_OK && !l, "the worker is full: it holds the second run");
    CHECK(finish(st, second, "failed", "x", 0, NULL) == ST_OK, "the second run ends");
    members(path, got, sizeof got);
    snprintf(want, sizeof want, "%lld:0 %lld:0 ", (long long)first, (long long)second);
    CHECK(!strcmp(got, want), "the trigger marks the ended run's member: %s", got);
    CHECK(lease(st, w, 60, &l) == ST_OK && lease_exp(l, "experiment") == c,
          "the freed slot takes the third experiment");
    json_decref(l);
    store_close(st);
}

/* the spec stored for experiment id */
static void stored_spec(const char *path, int64_t id, char *buf, size_t n)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    buf[0] = 0;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT spec FROM experiments WHERE id = ?1", -1, &s, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_int64(s, 1, id);
        if (sqlite3_step(s) == SQLITE_ROW)
            snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

/* Migration 6 on a database of version 5: a complete spec of that time gets
 * the recipe's settings with the values it ran (the embedding's std √0.4,
 * written to read back to the last bit); a field already there, or a
 * spec that is no complete one, is left as it was. */
static void migration_writes_out_the_old_recipe(void)
{
    char path[128], got[1024];
    snprintf(path, sizeof path, "%s/m6.db", dir);
    struct store *st = open_fresh("m6.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t old, set, bare;
    int rep;
    e.spec_json = "{\"model\":{\"dim\":64},\"norm\":{\"base\":\"lns\"},\"data\":{\"train\":\"t\"},"
                  "\"train\":{\"steps\":5}}";
    CHECK(store_create_experiment(st, &e, NULL, &old, &rep) == ST_OK, "an old spec");
    e.spec_json = "{\"model\":{\"dim\":64,\"embed_std\":0.02},\"norm\":{\"gains\":\"frozen\"},"
                  "\"data\":{\"packing\":\"documents\"},\"train\":{\"precision\":\"bf16\"}}";
    CHECK(store_create_experiment(st, &e, NULL, &set, &rep) == ST_OK, "a spec with the fields");
    e.spec_json = "{\"name\":\"t\"}";
    CHECK(store_create_experiment(st, &e, NULL, &bare, &rep) == ST_OK, "a bare spec");
    store_close(st);
    CHECK(sql(path, "ALTER TABLE workers DROP COLUMN secret; ALTER TABLE run_members DROP COLUMN secret;"
                    " PRAGMA user_version = 5;"),
          "the database taken back to version 5");
    st = open_fresh("m6.db");
    CHECK(st != NULL, "migration 6 applies");
    store_close(st);
    stored_spec(path, old, got, sizeof got);
    CHECK(!strcmp(got, "{\"model\":{\"dim\":64,\"embed_std\":0.6324555320336759},"
                       "\"norm\":{\"base\":\"lns\",\"gains\":\"learned\"},"
                       "\"data\":{\"train\":\"t\",\"packing\":\"stream\"},"
                       "\"train\":{\"steps\":5,\"precision\":\"mixed\"}}"),
          "the old spec: %s", got);
    stored_spec(path, set, got, sizeof got);
    CHECK(strstr(got, "\"embed_std\":0.02}") && strstr(got, "frozen") && strstr(got, "documents") &&
              strstr(got, "bf16") && !strstr(got, "learned"),
          "the fields given kept: %s", got);
    stored_spec(path, bare, got, sizeof got);
    CHECK(!strcmp(got, "{\"name\":\"t\"}"), "a spec without sections untouched: %s", got);
}

static int is_secret(const char *s)
{
    return strlen(s) == STORE_SECRET_SIZE - 1 && strspn(s, "0123456789abcdef") == strlen(s);
}

/* Migration 7 on a database of version 6: a worker registered and a rank
 * leased before secrets existed have none, so their calls need none (the
 * API compares against ""), and a lease made for such a worker has none
 * either; a worker registered since gets one, and so do its leases. */
static void migration_leaves_old_workers_without_secrets(void)
{
    char path[128], got[STORE_SECRET_SIZE];
    snprintf(path, sizeof path, "%s/m7.db", dir);
    struct store *st = open_fresh("m7.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t a, b, old, fresh;
    int rep, formed;
    char secret[STORE_SECRET_SIZE];
    struct lease_policy p = {60, store_now() + 30, 600};
    struct lease l;
    CHECK(store_create_experiment(st, &e, NULL, &a, &rep) == ST_OK &&
              store_create_experiment(st, &e, NULL, &b, &rep) == ST_OK &&
              store_register_worker(st, "old", "cpu", 2, "h", &old, secret) == ST_OK &&
              is_secret(secret),
          "registration gives a secret: %s", secret);
    CHECK(store_lease(st, old, &p, &l, &formed, NULL) == ST_OK && l.spec && is_secret(l.secret),
          "a lease gives its rank a secret: %s", l.secret);
    int64_t run = l.run;
    lease_free(&l);
    store_close(st);
    CHECK(sql(path, "ALTER TABLE workers DROP COLUMN secret; ALTER TABLE run_members DROP COLUMN secret;"
                    " PRAGMA user_version = 6;"),
          "the database taken back to version 6");
    st = open_fresh("m7.db");
    CHECK(st != NULL, "migrations 7 (applied again: it rebuilds what it makes) and 8 apply");
    CHECK(store_worker_secret(st, old, got, sizeof got) == ST_OK && !*got,
          "a worker of before has no secret: '%s'", got);
    CHECK(store_member_secret(st, run, 0, got, sizeof got) == ST_OK && !*got,
          "a rank leased before has none: '%s'", got);
    CHECK(store_member_secret(st, run, 1, got, sizeof got) == ST_INVALID, "a rank the run lacks");
    CHECK(store_member_secret(st, run + 100, 0, got, sizeof got) == ST_NOTFOUND, "no such run");
    CHECK(store_lease(st, old, &p, &l, &formed, NULL) == ST_OK && l.spec && !*l.secret,
          "the old worker's next lease has none either: '%s'", l.secret);
    lease_free(&l);
    CHECK(store_register_worker(st, "new", "cpu", 1, "h", &fresh, secret) == ST_OK &&
              is_secret(secret) && store_worker_secret(st, fresh, got, sizeof got) == ST_OK &&
              !strcmp(got, secret),
          "a worker registered since has one, and the store gives it back");
    store_close(st);
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* A long read (a report, a backup) while the points keep coming: the WAL
 * grows for as long as the reader holds its snapshot, as it must, but once
 * the reader is gone and the WAL is folded back, the file goes back under
 * the store's limit instead of keeping the size of the largest burst on
 * disk for as long as the server runs. */
static void wal_shrinks_after_a_long_read(void)
{
    char path[128], wal[140];
    snprintf(path, sizeof path, "%s/wal.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct store *st = open_fresh("wal.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t id, w;
    int rep;
    json_t *l;
    CHECK(st && store_create_experiment(st, &e, NULL, &id, &rep) == ST_OK &&
              store_register_worker(st, "w", "cpu", 1, "h", &w, NULL) == ST_OK &&
              lease(st, w, 600, &l) == ST_OK && l,
          "a leased run");
    int64_t run = lease_exp(l, "run");
    json_decref(l);
    sqlite3 *reader;
    CHECK(sqlite3_open(path, &reader) == SQLITE_OK &&
              sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM metrics;", NULL, NULL, NULL) ==
                  SQLITE_OK,
          "an outside reader holds a snapshot");
    enum { BATCH = 5000 };
    static struct metric_point pts[BATCH];
    long step = 0;
    long long limit = STORE_WAL_LIMIT_BYTES;
    while (file_size(wal) <= 2 * limit && step < 10000000) {
        for (int i = 0; i < BATCH; i++)
            pts[i] = (struct metric_point){"train/loss", ++step, -1, 1.0 / (double)step, 0};
        if (store_report(st, run, pts, BATCH, NULL, 0) != ST_OK)
            break;
    }
    long long grown = file_size(wal);
    CHECK(grown > 2 * limit, "the WAL grows while the reader holds it: %lld bytes, %ld points",
          grown, step);
    sqlite3_exec(reader, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(reader);
    /* the next commits fold the WAL back and start it again from the top */
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < BATCH; i++)
            pts[i] = (struct metric_point){"train/loss", ++step, -1, 1.0 / (double)step, 0};
        store_report(st, run, pts, BATCH, NULL, 0);
    }
    long long after = file_size(wal);
    CHECK(after >= 0 && after <= limit, "the WAL back under %lld bytes: %lld", limit, after);
    json_t *m;
    CHECK(store_metrics(st, id, "train/loss", 0, 1, 1, &m) == ST_OK, "the points read back");
    json_decref(m);
    store_close(st);
}

static void priority_then_fifo_and_resources(void)
{
    struct store *st = open_fresh("q.db");
    int64_t a, b, c, g, w_cpu, w_gpu;
    int rep;
    struct new_experiment low = exp_row("cpu", 0), high = exp_row("any", 5), gpu = exp_row("cuda", 9);
    CHECK(store_create_experiment(st, &low, NULL, &a, &rep) == ST_OK, "create a");
    CHECK(store_create_experiment(st, &low, NULL, &b, &rep) == ST_OK, "create b");
    CHECK(store_create_experiment(st, &high, NULL, &c, &rep) == ST_OK, "create c");
    CHECK(store_create_experiment(st, &gpu, NULL, &g, &rep) == ST_OK, "create g");
    CHECK(store_register_worker(st, "cpu", "cpu", 3, "h", &w_cpu, NULL) == ST_OK, "register cpu");
    CHECK(store_register_worker(st, "gpu", "cuda", 1, "h", &w_gpu, NULL) == ST_OK, "register gpu");
    json_t *l1, *l2, *l3, *l4;
    CHECK(lease(st, w_cpu, 60, &l1) == ST_OK && lease_exp(l1, "experiment") == c,
          "priority first");
    CHECK(lease(st, w_cpu, 60, &l2) == ST_OK && lease_exp(l2, "experiment") == a, "then FIFO");
    CHECK(lease(st, w_cpu, 60, &l3) == ST_OK && lease_exp(l3, "experiment") == b, "then b");
    CHECK(lease(st, w_cpu, 60, &l4) == ST_OK && l4 == NULL,
          "a cuda job never goes to a cpu worker");
    json_decref(l4);
    CHECK(lease(st, w_gpu, 60, &l4) == ST_OK && lease_exp(l4, "experiment") == g,
          "the cuda worker gets it");
    json_decref(l1);
    json_decref(l2);
    json_decref(l3);
    json_decref(l4);
    json_t *none;
    CHECK(lease(st, 999, 60, &none) == ST_NOTFOUND, "unknown worker");
    store_close(st);
}

static void idempotency_key(void)
{
    struct store *st = open_fresh("i.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t a, b;
    int r1, r2;
    CHECK(store_create_experiment(st, &e, "key-1", &a, &r1) == ST_OK && !r1, "first");
    CHECK(store_create_experiment(st, &e, "key-1", &b, &r2) == ST_OK && r2 && a == b, "replay");
    json_t *list;
    struct exp_filter f = {.limit = 10};
    CHECK(views_experiments(st, &f, &list) == ST_OK &&
              json_array_size(json_object_get(list, "experiments")) == 1,
          "one row");
    json_decref(list);
    store_close(st);
}

static void lapse_requeues_then_fails(void)
{
    struct store *st = open_fresh("r.db");
    struct new_experiment e = exp_row("cpu", 0);  /* max_attempts 2 */
    int64_t id, w;
    int rep, expired, cancel;
    char s[32];
    store_create_experiment(st, &e, NULL, &id, &rep);
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    json_t *l;
    lease(st, w, 0.05, &l);
    int64_t run = lease_exp(l, "run");
    json_decref(l);
    usleep(100 * 1000);
    struct metric_point p = {"train/loss", 1, -1, 2.0, 0};
    CHECK(store_report(st, run, &p, 1, NULL, 0) == ST_CONFLICT, "lapsed lease: report refused");
    CHECK(store_heartbeat(st, run, 0, 1, 60, &cancel) == ST_CONFLICT, "lapsed lease: heartbeat refused");
    CHECK(store_reap(st, 600, &expired) == ST_OK && expired == 1, "reaped %d", expired);
    CHECK(!strcmp(state_of(st, id, s, sizeof s), "queued"), "back to queued: %s", s);
    json_t *m;
    CHECK(store_metrics(st, id, NULL, 0, 1000, 1, &m) == ST_OK &&
              json_object_size(json_object_get(m, "series")) == 0,
          "nothing written by the lost run");
    json_decref(m);
    lease(st, w, 0.05, &l);
    CHECK(l && lease_exp(l, "attempt") == 2, "second attempt");
    json_decref(l);
    usleep(100 * 1000);
    store_reap(st, 600, &expired);
    CHECK(!strcmp(state_of(st, id, s, sizeof s), "failed"), "failed after max_attempts: %s", s);
    json_t *o;
    views_experiment(st, id, &o);
    const char *reason = json_string_value(json_object_get(o, "reason"));
    CHECK(reason && strstr(reason, "lease lapsed"), "reason kept: %s", reason ? reason : "null");
    CHECK(json_integer_value(json_object_get(o, "attempts")) == 2, "attempts 2");
    json_decref(o);
    json_t *stats;
    CHECK(views_counts(st, 60, &stats) == ST_OK &&
              json_integer_value(json_object_get(stats, "lease_expiries")) == 2,
          "expiries counted");
    json_decref(stats);
    store_close(st);
}

static void metrics_idempotent_and_finish(void)
{
    struct store *st = open_fresh("x.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t id, w;
    int rep;
    char s[32];
    store_create_experiment(st, &e, NULL, &id, &rep);
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    json_t *l;
    lease(st, w, 60, &l);
    int64_t run = lease_exp(l, "run");
    json_decref(l);
    struct metric_point pts[3] = {{"train/loss", 1, -1, 3.0, 0},
                                  {"train/loss", 2, -1, 0, 1},
                                  {"layer/out_var", 2, 1, 1.5, 0}};
    struct log_line ll = {1, "hi"};
    CHECK(store_report(st, run, pts, 3, &ll, 1) == ST_OK, "report");
    CHECK(store_report(st, run, pts, 3, &ll, 1) == ST_OK, "retried report");
    json_t *m, *series;
    CHECK(store_metrics(st, id, "train/loss", 0, 100, 1, &m) == ST_OK, "series");
    series = json_object_get(json_object_get(m, "series"), "train/loss");
    CHECK(json_array_size(series) == 2, "no duplicate points: %zu", json_array_size(series));
    CHECK(json_is_null(json_array_get(json_array_get(series, 1), 1)), "non-finite kept as null");
    json_decref(m);
    json_t *logs;
    CHECK(store_logs(st, id, 0, 100, &logs) == ST_OK &&
              json_array_size(json_object_get(logs, "lines")) == 1,
          "log line once");
    json_decref(logs);
    CHECK(store_cancel(st, id) == ST_OK, "cancel running");
    int cancel;
    CHECK(store_heartbeat(st, run, 0, 3, 60, &cancel) == ST_OK && cancel, "heartbeat answers cancel");
    CHECK(!strcmp(state_of(st, id, s, sizeof s), "cancelled"), "cancelled: %s", s);
    struct points_held held;
    CHECK(finish(st, run, "succeeded", NULL, 0, &held) == ST_CONFLICT,
          "finish after cancel refused");
    CHECK(store_cancel(st, id) == ST_CONFLICT, "cancel of a finished experiment");
    int64_t id2;
    store_create_experiment(st, &e, NULL, &id2, &rep);
    CHECK(store_cancel(st, id2) == ST_OK && !strcmp(state_of(st, id2, s, sizeof s), "cancelled"),
          "queued cancelled at once");
    int64_t id3;
    store_create_experiment(st, &e, NULL, &id3, &rep);
    lease(st, w, 60, &l);
    run = lease_exp(l, "run");
    json_decref(l);
    CHECK(finish(st, run, "succeeded", NULL, 0, &held) == ST_INCOMPLETE &&
              !held.final_loss && held.final_step == 100 && held.points == 0,
          "succeeded refused without the final step's loss");
    struct metric_point last[2] = {{"train/loss", 99, -1, 2.0, 0}, {"train/loss", 100, -1, 1.0, 0}};
    CHECK(store_report(st, run, last, 2, NULL, 0) == ST_OK, "report the final steps");
    CHECK(finish(st, run, "succeeded", NULL, 3, &held) == ST_INCOMPLETE && held.final_loss &&
              held.points == 2,
          "succeeded refused with fewer points than the worker's files hold");
    CHECK(!strcmp(state_of(st, id3, s, sizeof s), "running"), "still running: %s", s);
    CHECK(finish(st, run, "succeeded", NULL, 2, &held) == ST_OK, "finish");
    CHECK(finish(st, run, "succeeded", NULL, 2, &held) == ST_OK, "retried finish");
    CHECK(!strcmp(state_of(st, id3, s, sizeof s), "succeeded"), "succeeded: %s", s);
    char why[64];
    CHECK(!strcmp(field_of(st, id2, "reason", why, sizeof why), "cancelled before it started"),
          "a queued experiment that never ran: %s", why);
    int64_t id4;
    store_create_experiment(st, &e, NULL, &id4, &rep);
    lease(st, w, 60, &l);
    run = lease_exp(l, "run");
    json_decref(l);
    CHECK(finish(st, run, "released", NULL, 0, &held) == ST_OK &&
              !strcmp(state_of(st, id4, s, sizeof s), "queued"),
          "a lease given back: queued again (%s)", s);
    CHECK(store_cancel(st, id4) == ST_OK && !strcmp(field_of(st, id4, "reason", why, sizeof why),
                                                    "cancelled while queued to resume"),
          "cancelled while queued after a run, the reason does not say it never ran: %s", why);
    store_close(st);
}

/* A worker that said it stops leases nothing (a long-poll it left parked
 * must not claim work); gone workers, and only those, can be removed. */
static void worker_offline_and_removed(void)
{
    struct store *st = open_fresh("w.db");
    struct new_experiment e = exp_row("cpu", 0);
    int64_t id, w, w2;
    int rep, runs;
    char state[16];
    json_t *l;
    store_create_experiment(st, &e, NULL, &id, &rep);
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    store_register_worker(st, "w2", "cpu", 1, "h", &w2, NULL);
    CHECK(store_remove_worker(st, w, 60, state, sizeof state, &runs) == ST_CONFLICT &&
              !strcmp(state, "idle"),
          "an idle worker is not removed: %s", state);
    CHECK(store_worker_offline(st, w) == ST_OK, "offline");
    CHECK(lease(st, w, 60, &l) == ST_NOTFOUND && !l, "an offline worker leases nothing");
    CHECK(lease(st, w2, 60, &l) == ST_OK && lease_exp(l, "experiment") == id,
          "the experiment went to the other worker");
    json_decref(l);
    CHECK(store_worker_offline(st, w2) == ST_OK, "w2 offline while it holds a run");
    CHECK(store_remove_worker(st, w2, 60, state, sizeof state, &runs) == ST_CONFLICT && runs == 1,
          "a worker whose run has not lapsed is not removed");
    CHECK(store_remove_worker(st, w, 60, state, sizeof state, &runs) == ST_OK, "removed");
    CHECK(store_remove_worker(st, w, 60, state, sizeof state, &runs) == ST_NOTFOUND,
          "removed once");
    CHECK(store_worker_offline(st, w) == ST_NOTFOUND, "a removed worker is unknown");
    json_t *list;
    CHECK(views_workers(st, 60, &list) == ST_OK &&
              json_array_size(json_object_get(list, "workers")) == 1,
          "a removed worker is not listed");
    json_decref(list);
    store_close(st);
}

/* Many threads lease from one store: every experiment is leased exactly once. */
#define N_EXP 200
#define N_THREADS 8
static struct store *shared;
static int leased[N_EXP + 1];
static pthread_mutex_t leased_lock = PTHREAD_MUTEX_INITIALIZER;

static void *leaser(void *arg)
{
    (void)arg;
    int64_t w;
    if (store_register_worker(shared, "w", "cpu", 1000, "h", &w, NULL) != ST_OK)
        return NULL;
    for (;;) {
        json_t *l;
        if (lease(shared, w, 60, &l) != ST_OK || !l)
            return NULL;
        int64_t e = lease_exp(l, "experiment");
        json_decref(l);
        pthread_mutex_lock(&leased_lock);
        if (e >= 1 && e <= N_EXP)
            leased[e]++;
        pthread_mutex_unlock(&leased_lock);
    }
}

static void never_leased_twice(void)
{
    shared = open_fresh("c.db");
    struct new_experiment e = exp_row("cpu", 0);
    for (int i = 0; i < N_EXP; i++) {
        int64_t id;
        int rep;
        store_create_experiment(shared, &e, NULL, &id, &rep);
    }
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++)
        pthread_create(&t[i], NULL, leaser, NULL);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(t[i], NULL);
    int once = 0;
    for (int i = 1; i <= N_EXP; i++)
        once += leased[i] == 1;
    CHECK(once == N_EXP, "%d of %d leased exactly once", once, N_EXP);
    store_close(shared);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/cod-store-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(migrations_are_idempotent);
    RUN(migration_marks_held_runs);
    RUN(migration_writes_out_the_old_recipe);
    RUN(migration_leaves_old_workers_without_secrets);
    RUN(wal_shrinks_after_a_long_read);
    RUN(priority_then_fifo_and_resources);
    RUN(idempotency_key);
    RUN(lapse_requeues_then_fails);
    RUN(metrics_idempotent_and_finish);
    RUN(worker_offline_and_removed);
    RUN(never_leased_twice);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_EXIT();
}
