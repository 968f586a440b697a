/* Chains of experiments in the store: one that waits is never leased, and
 * is queued once the last it waits for has succeeded; a failure blocks
 * every experiment down the chain with the reason; one submitted after a
 * failure starts blocked, after a success queued; an unknown dependency
 * refuses the submission and writes nothing; a chain cancelled from its
 * first; a sweep's later stages start from their cell's stage before; a
 * run of train.epochs learns its steps from its first point; a database
 * of version 6 migrates with its experiments as they were. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "schema/store.h"
#include "views/experiment.h"
#include "tests/check.h"

static char dir[64];

static struct store *open_store(const char *name)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct store *st = NULL;
    if (store_open(path, 2, &st, err, sizeof err) != 0)
        fprintf(stderr, "store_open: %s\n", err);
    return st;
}

static int64_t submit(struct store *st, const char *name, const int64_t *after, int n, int *rc)
{
    struct new_experiment e = {.name = name, .model = "llama-9m", .norm = "pre", .device = "cpu",
                               .spec_json = "{}", .gpus = 1, .max_attempts = 1, .steps = 10,
                               .after = after, .n_after = n};
    int64_t id = 0;
    int rep;
    *rc = store_create_experiment(st, &e, NULL, &id, &rep);
    return id;
}

static const char *field(struct store *st, int64_t id, const char *key, char *buf, size_t n)
{
    json_t *o;
    snprintf(buf, n, "?");
    if (views_experiment(st, id, &o) != ST_OK)
        return buf;
    json_t *v = json_object_get(o, key);
    snprintf(buf, n, "%s", json_is_string(v) ? json_string_value(v) : "(none)");
    json_decref(o);
    return buf;
}

/* The experiment a lease gives the worker (0: none) and its run. */
static int64_t lease_one(struct store *st, int64_t worker, int64_t *run)
{
    struct lease_policy p = {60, store_now() + 1, 600};
    struct lease l;
    int formed;
    *run = 0;
    if (store_lease(st, worker, &p, &l, &formed, NULL) != ST_OK || !l.spec)
        return 0;
    *run = l.run;
    lease_free(&l);
    return l.experiment;
}

/* The run's last loss reported and the run ended with outcome. */
static int end_run(struct store *st, int64_t run, const char *outcome, const char *reason)
{
    struct metric_point pt = {"train/loss", 10, -1, 1.0, 0};
    struct finish f = {run, 0, outcome, reason, 0, 0};
    struct points_held held;
    int64_t w;
    return store_report(st, run, &pt, 1, NULL, 0) != ST_OK ? ST_ERROR
                                                           : store_finish(st, &f, &held, &w);
}

static void waits_then_runs(void)
{
    struct store *st = open_store("w.db");
    int rc;
    char s[600];
    int64_t a = submit(st, "a", NULL, 0, &rc);
    int64_t b = submit(st, "b", &a, 1, &rc);
    CHECK(rc == ST_OK && !strcmp(field(st, b, "state", s, sizeof s), "waiting"), "b waits: %s", s);
    json_t *o;
    CHECK(views_experiment(st, b, &o) == ST_OK &&
              json_integer_value(json_object_get(json_array_get(json_object_get(o, "after"), 0),
                                                 "id")) == a,
          "its view names what it waits for");
    json_decref(o);
    int64_t w, run;
    store_register_worker(st, "w", "cpu", 2, "h", &w, NULL);
    CHECK(lease_one(st, w, &run) == a, "the first is leased");
    int64_t run2;
    CHECK(lease_one(st, w, &run2) == 0, "the one that waits is not, though the worker has room");
    CHECK(end_run(st, run, "succeeded", NULL) == ST_OK, "the first succeeds");
    CHECK(!strcmp(field(st, b, "state", s, sizeof s), "queued"), "then b is queued: %s", s);
    CHECK(lease_one(st, w, &run2) == b, "and leased");
    /* after two: queued only when both have succeeded */
    int64_t c = submit(st, "c", NULL, 0, &rc), two[2] = {b, c};
    int64_t d = submit(st, "d", two, 2, &rc);
    CHECK(end_run(st, run2, "succeeded", NULL) == ST_OK &&
              !strcmp(field(st, d, "state", s, sizeof s), "waiting"),
          "d waits for c still: %s", s);
    CHECK(lease_one(st, w, &run) == c && end_run(st, run, "succeeded", NULL) == ST_OK &&
              !strcmp(field(st, d, "state", s, sizeof s), "queued"),
          "queued once both have succeeded: %s", s);
    int64_t e = submit(st, "e", &a, 1, &rc);
    CHECK(!strcmp(field(st, e, "state", s, sizeof s), "queued"),
          "one submitted after its dependency succeeded is queued at once: %s", s);
    store_close(st);
}

static void failure_blocks_the_chain(void)
{
    struct store *st = open_store("f.db");
    int rc;
    char s[600];
    int64_t a = submit(st, "pre", NULL, 0, &rc);
    int64_t b = submit(st, "ft", &a, 1, &rc);
    int64_t c = submit(st, "eval", &b, 1, &rc);
    int64_t w, run;
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    CHECK(lease_one(st, w, &run) == a, "the first is leased");
    CHECK(end_run(st, run, "failed", "diverged at step 7") == ST_OK, "it fails");
    char want[300];
    snprintf(want, sizeof want, "waits for experiment %lld (pre), which failed: diverged at step 7",
             (long long)a);
    CHECK(!strcmp(field(st, b, "state", s, sizeof s), "blocked") &&
              !strcmp(field(st, b, "reason", s, sizeof s), want),
          "the next blocked, saying why: %s", s);
    CHECK(!strcmp(field(st, c, "state", s, sizeof s), "blocked") &&
              !strcmp(field(st, c, "reason", s, sizeof s), want),
          "and the one after it, naming the failure: %s", s);
    CHECK(lease_one(st, w, &run) == 0, "nothing of the chain is leased");
    int64_t d = submit(st, "late", &a, 1, &rc);
    CHECK(rc == ST_OK && !strcmp(field(st, d, "state", s, sizeof s), "blocked") &&
              strstr(field(st, d, "reason", s, sizeof s), "which failed: diverged"),
          "one submitted after the failure starts blocked: %s", s);
    int64_t e = submit(st, "late2", &d, 1, &rc);
    CHECK(!strcmp(field(st, e, "reason", s, sizeof s), "waits for experiment 4 (late), which is blocked: "
                                                       "waits for experiment 1 (pre), which failed: "
                                                       "diverged at step 7"),
          "after a blocked one: %s", s);
    CHECK(store_cancel(st, b) == ST_CONFLICT, "a blocked experiment has finished");
    /* an unknown dependency refuses the submission and writes nothing */
    int64_t nowhere[2] = {a, 999};
    int64_t x = submit(st, "x", nowhere, 2, &rc);
    (void)x;
    json_t *list;
    struct exp_filter f = {.limit = 100};
    CHECK(rc == ST_INVALID, "an unknown experiment in after: %d", rc);
    CHECK(views_experiments(st, &f, &list) == ST_OK &&
              json_array_size(json_object_get(list, "experiments")) == 5,
          "nothing written");
    json_decref(list);
    store_close(st);
}

static void cancel_a_chain(void)
{
    struct store *st = open_store("c.db");
    int rc, n;
    char s[600];
    int64_t a = submit(st, "a", NULL, 0, &rc), b = submit(st, "b", &a, 1, &rc);
    int64_t c = submit(st, "c", &b, 1, &rc);
    CHECK(store_cancel(st, a) == ST_OK, "the first cancelled alone");
    CHECK(!strcmp(field(st, b, "state", s, sizeof s), "blocked") &&
              strstr(field(st, b, "reason", s, sizeof s), "which cancelled: cancelled before it started"),
          "its chain blocked: %s", s);
    int64_t a2 = submit(st, "a2", NULL, 0, &rc), b2 = submit(st, "b2", &a2, 1, &rc);
    int64_t c2 = submit(st, "c2", &b2, 1, &rc), w, run;
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    CHECK(lease_one(st, w, &run) == a2, "the second chain's first runs");
    CHECK(store_cancel_chain(st, a2, &n) == ST_OK && n == 2, "cancelled with its chain (%d after it)",
          n);
    CHECK(!strcmp(field(st, b2, "state", s, sizeof s), "cancelled") &&
              !strcmp(field(st, c2, "state", s, sizeof s), "cancelled") &&
              strstr(field(st, c2, "reason", s, sizeof s), "cancelled with its chain"),
          "the rest cancelled, not blocked: %s", s);
    int cancel;
    CHECK(store_heartbeat(st, run, 0, 3, 60, &cancel) == ST_OK && cancel,
          "the running first is told to stop");
    CHECK(store_cancel_chain(st, 9999, &n) == ST_NOTFOUND, "no such experiment");
    (void)c;
    store_close(st);
}

static int count_point(void *ctx, int64_t step, int64_t layer, int is_null, double value)
{
    (void)step, (void)layer, (void)is_null, (void)value;
    ++*(int *)ctx;
    return 0;
}

static void stages_and_steps(void)
{
    struct store *st = open_store("s.db");
    struct new_experiment rows[2] = {
        {.name = "lns", .model = "L2-d32", .norm = "lns", .device = "cpu",
         .spec_json = "{\"name\":\"lns\"}", .gpus = 1, .max_attempts = 1, .steps = 10,
         .cell_json = "{\"norm\":\"lns\"}"},
        {.name = "lns.ft", .device = "cpu",
         .spec_json = "{\"name\":\"lns.ft\",\"init\":{\"from\":{\"experiment\":1}}}", .gpus = 1,
         .max_attempts = 1, .steps = 0, .cell_json = "{\"norm\":\"lns\"}", .stage = 1}};
    int64_t sw, w, run;
    int rep;
    char s[600];
    CHECK(store_create_sweep(st, "{}", NULL, rows, 2, &sw, &rep) == ST_OK, "a sweep of two stages");
    struct sweep_rows v;
    CHECK(store_sweep(st, sw, &v) == ST_OK, "its rows");
    int64_t first = v.n_cells ? v.cells[0].experiment : 0;
    int64_t ft = v.n_stages ? v.stages[0].experiment : 0;
    CHECK(v.n_cells == 1 && v.n_stages == 1 && ft == first + 1 && v.stages[0].stage == 1,
          "the grid's cells apart from the later stages");
    sweep_rows_free(&v);
    int points = 0;
    CHECK(store_points_of(st, NULL, 0, "eval/ppl", count_point, &points) == ST_OK && points == 0,
          "a group with no experiment to average has no points");
    CHECK(store_points_of(st, &first, 1, "eval/ppl", count_point, &points) == ST_OK && points == 0,
          "nor has one whose experiment reported none");
    json_t *o;
    CHECK(views_experiment(st, ft, &o) == ST_OK, "the stage's view");
    json_t *from = json_object_get(json_object_get(json_object_get(o, "spec"), "init"), "from");
    CHECK(json_integer_value(json_object_get(from, "experiment")) == first,
          "it starts from its cell's first stage");
    CHECK(!strcmp(json_string_value(json_object_get(o, "state")), "waiting") &&
              !strcmp(json_string_value(json_object_get(o, "norm")), "lns") &&
              !strcmp(json_string_value(json_object_get(o, "model")), "L2-d32") &&
              json_integer_value(json_object_get(o, "stage")) == 1,
          "waiting for it, filed under its model and variant");
    json_decref(o);
    store_register_worker(st, "w", "cpu", 1, "h", &w, NULL);
    CHECK(lease_one(st, w, &run) == first && end_run(st, run, "succeeded", NULL) == ST_OK,
          "the first stage runs");
    CHECK(lease_one(st, w, &run) == ft, "then the later one");
    struct metric_point pts[2] = {{"train/steps", 0, -1, 37, 0}, {"train/loss", 1, -1, 2.0, 0}};
    CHECK(store_report(st, run, pts, 2, NULL, 0) == ST_OK, "its first points");
    CHECK(views_experiment(st, ft, &o) == ST_OK &&
              json_integer_value(json_object_get(o, "steps")) == 37,
          "train/steps gives the steps that train.epochs made");
    json_decref(o);
    (void)s;
    store_close(st);
}

/* A database of version 6, made by a server of that time (the CHECK of its
 * state without 'waiting' and 'blocked'): its experiments kept as they were. */
static void migrates_from_version_6(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.db", dir);
    struct store *st = open_store("m.db");
    int rc;
    int64_t a = submit(st, "old", NULL, 0, &rc);
    store_close(st);
    sqlite3 *db;
    int ok = sqlite3_open(path, &db) == SQLITE_OK &&
             sqlite3_exec(db,
                          "PRAGMA foreign_keys = OFF; DROP TRIGGER waits_succeeded;"
                          " DROP TRIGGER waits_blocked; DROP TRIGGER metrics_steps; DROP TABLE waits;"
                          " ALTER TABLE workers DROP COLUMN secret; ALTER TABLE run_members DROP COLUMN secret;"
                          " CREATE TABLE e6 AS SELECT * FROM experiments; DROP TABLE experiments;"
                          " ALTER TABLE e6 DROP COLUMN stage; ALTER TABLE e6 RENAME TO experiments;"
                          " PRAGMA user_version = 6;",
                          NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(db);
    CHECK(ok, "the database taken back to version 6");
    st = open_store("m.db");
    CHECK(st != NULL, "migrations 7 and 8 apply");
    char s[64];
    CHECK(st && !strcmp(field(st, a, "state", s, sizeof s), "queued") &&
              !strcmp(field(st, a, "name", s, sizeof s), "old"),
          "the experiment as it was");
    int64_t b = st ? submit(st, "new", &a, 1, &rc) : 0;
    CHECK(st && rc == ST_OK && !strcmp(field(st, b, "state", s, sizeof s), "waiting"),
          "and a new one waits for it: %s", s);
    char v[64] = "";
    CHECK(st && store_integrity(st, v, sizeof v) == 0 && !strcmp(v, "ok"), "integrity %s", v);
    if (st)
        store_close(st);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/cod-chains-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(waits_then_runs);
    RUN(failure_blocks_the_chain);
    RUN(cancel_a_chain);
    RUN(stages_and_steps);
    RUN(migrates_from_version_6);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    CHECK_EXIT();
}
