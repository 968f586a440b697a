/* The store (db.h): its writer and its pool of readers (each a connection,
 * conn.c), and its transactions.
 *
 * Group commit: writes that arrive together share one transaction and one
 * fsync. A request queues its write (db_run) and waits; one thread, the
 * committer, takes every write queued, runs each in a savepoint of one
 * transaction (so a refused or failing request leaves no trace while the
 * others stand), commits it (synchronous=FULL: on disk), and only then
 * lets any request of it return. Nothing is answered before it is
 * durable, and a batch whose commit fails fails every request of it. The
 * requests' own threads once took turns at the connection, and the
 * batch's commit held it; a write of a lease spent more time waiting for
 * its turn to be scheduled than running.
 *
 * The committer's time bounds the write rate, so what can be done
 * elsewhere is: the callbacks of a committed batch's queued jobs (which
 * wake their connections, a syscall each) run on a second thread, the
 * answerer, while the committer starts the next batch. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/migrate.h"

static const char q_begin[] =
    "BEGIN IMMEDIATE";
static const char q_commit[] =
    "COMMIT";
static const char q_rollback[] =
    "ROLLBACK";
static const char q_savepoint[] =
    "SAVEPOINT req";
static const char q_release[] =
    "RELEASE req";
static const char q_undo[] =
    "ROLLBACK TO req";

/* bounds a transaction, and the wait of the batch's first request */
enum { BATCH_MAX = 256 };

static void *committer(void *arg);
static void *answerer(void *arg);

int store_open(const char *path, int readers, struct store **out, char *err, size_t errlen)
{
    struct store *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    beats_init(&st->beats);
    pthread_mutex_init(&st->gate, NULL);
    pthread_cond_init(&st->queued, NULL);
    pthread_mutex_init(&st->alock, NULL);
    pthread_cond_init(&st->answers_queued, NULL);
    pthread_mutex_init(&st->rlock, NULL);
    pthread_cond_init(&st->rfree, NULL);
    db_outage_init(&st->outage);
    if (db_conn_open(&st->writer, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &st->outage, err,
                  errlen) != 0)
        goto fail;
    char *msg = NULL, wal[96];
    snprintf(wal, sizeof wal, "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = %lld",
             STORE_WAL_LIMIT_BYTES);
    if (sqlite3_exec(st->writer.db, wal, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: WAL: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        goto fail;
    }
    if (migrate(st->writer.db, err, errlen) != 0)
        goto fail;
    st->n_readers = readers < 1 ? 1 : readers;
    st->readers = calloc((size_t)st->n_readers, sizeof *st->readers);
    if (!st->readers) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int i = 0; i < st->n_readers; i++)
        if (db_conn_open(&st->readers[i], path, SQLITE_OPEN_READONLY, &st->outage, err, errlen) != 0)
            goto fail;
    if (pthread_create(&st->answerer, NULL, answerer, st) != 0) {
        snprintf(err, errlen, "cannot start the store's answering thread");
        goto fail;
    }
    st->answerer_started = 1;
    if (pthread_create(&st->committer, NULL, committer, st) != 0) {
        snprintf(err, errlen, "cannot start the store's committer thread");
        goto fail;
    }
    st->committer_started = 1;
    *out = st;
    return 0;
fail:
    store_close(st);
    return -1;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    if (st->committer_started) {
        /* what is queued is committed first */
        pthread_mutex_lock(&st->gate);
        st->closing = 1;
        pthread_cond_signal(&st->queued);
        pthread_mutex_unlock(&st->gate);
        pthread_join(st->committer, NULL);
    }
    if (st->answerer_started) {
        /* and every committed job answered */
        pthread_mutex_lock(&st->alock);
        st->answers_closing = 1;
        pthread_cond_signal(&st->answers_queued);
        pthread_mutex_unlock(&st->alock);
        pthread_join(st->answerer, NULL);
    }
    for (int i = 0; st->readers && i < st->n_readers; i++)
        if (st->readers[i].db)
            db_conn_close(&st->readers[i]);
    free(st->readers);
    if (st->writer.db) {
        /* Fold the WAL back so the file is whole on its own after a clean stop. */
        sqlite3_wal_checkpoint_v2(st->writer.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        db_conn_close(&st->writer);
    }
    beats_free(&st->beats);
    pthread_mutex_destroy(&st->gate);
    pthread_cond_destroy(&st->queued);
    pthread_mutex_destroy(&st->alock);
    pthread_cond_destroy(&st->answers_queued);
    pthread_mutex_destroy(&st->rlock);
    pthread_cond_destroy(&st->rfree);
    db_outage_destroy(&st->outage);
    free(st);
}

struct conn *db_reader_get(struct store *st)
{
    pthread_mutex_lock(&st->rlock);
    for (;;) {
        for (int i = 0; i < st->n_readers; i++)
            if (!st->readers[i].busy) {
                st->readers[i].busy = 1;
                pthread_mutex_unlock(&st->rlock);
                return &st->readers[i];
            }
        pthread_cond_wait(&st->rfree, &st->rlock);
    }
}

void db_reader_put(struct store *st, struct conn *c)
{
    db_reset_used(c);
    pthread_mutex_lock(&st->rlock);
    c->busy = 0;
    pthread_cond_signal(&st->rfree);
    pthread_mutex_unlock(&st->rlock);
}

/* A write waiting for the committer: on its caller's stack (db_run), or
 * on the heap with a callback (db_submit). */
struct job {
    db_job_fn fn;
    void *arg;
    int rc, done;
    pthread_cond_t done_cv;
    db_done_fn then;
    void *ctx;
    struct job *next;
};

/* One job in a savepoint of the open transaction: its result, ST_ERROR
 * where the savepoint could not be kept or undone. */
static int run_one(struct store *st, struct job *j)
{
    struct conn *c = &st->writer;
    if (db_exec(c, db_stmt(c, q_savepoint)) != 0)
        return ST_ERROR;
    int rc = j->fn(st, j->arg);
    if (rc == ST_OK && db_exec(c, db_stmt(c, q_release)) != 0)
        rc = ST_ERROR;
    if (rc != ST_OK && !sqlite3_get_autocommit(c->db) &&
        (db_exec(c, db_stmt(c, q_undo)) != 0 || db_exec(c, db_stmt(c, q_release)) != 0))
        rc = ST_ERROR;
    db_reset_used(c);
    return rc;
}

/* One batch: BEGIN, the heartbeats noted meanwhile (outside
 * any job's savepoint), each job, COMMIT. SQLite rolls the whole
 * transaction back on some errors (a full or failing disk): then the batch
 * is gone, and a batch that is gone or whose commit fails fails every job
 * of it. */
static void run_batch(struct store *st, struct job *batch)
{
    struct conn *c = &st->writer;
    int ok = db_exec(c, db_stmt(c, q_begin)) == 0;
    /* heartbeats that fail to go are kept to try again; the batch goes on */
    st->beats_failed = !ok || db_beats_flush(&st->beats, c, store_now()) != 0;
    for (struct job *j = batch; j; j = j->next) {
        ok = ok && !sqlite3_get_autocommit(c->db);
        j->rc = ok ? run_one(st, j) : ST_ERROR;
    }
    ok = ok && !sqlite3_get_autocommit(c->db) && db_exec(c, db_stmt(c, q_commit)) == 0;
    if (!ok && !sqlite3_get_autocommit(c->db))
        db_exec(c, db_stmt(c, q_rollback));
    /* a failed commit took the heartbeats' extensions with it (a lease
     * that lapses on disk while its worker still beats) */
    db_beats_settle(&st->beats, ok);
    db_reset_used(c);
    for (struct job *j = batch; !ok && j; j = j->next)
        j->rc = ST_ERROR;
}

/* The committer: takes every write queued (at most BATCH_MAX; one when
 * group commit is off) and runs them as one transaction. While it commits
 * one batch the next gathers, so the batches grow with the load, and no
 * request waits for another request's thread to be scheduled. */
static void *committer(void *arg)
{
    struct store *st = arg;
    pthread_mutex_lock(&st->gate);
    for (;;) {
        while (!st->jobs && !st->closing)
            pthread_cond_wait(&st->queued, &st->gate);
        struct job *batch = st->jobs, *last = batch;
        if (!batch)
            break;
        int n = 1;
        for (; last->next && n < (st->solo ? 1 : BATCH_MAX); n++)
            last = last->next;
        st->jobs = last->next;
        if (!st->jobs)
            st->jobs_tail = NULL;
        last->next = NULL;
        pthread_mutex_unlock(&st->gate);
        run_batch(st, batch);
        struct job *waiting = NULL, *answers = NULL, *last_answer = NULL;
        for (struct job *j = batch, *next; j; j = next) {
            next = j->next;
            j->next = NULL;
            if (j->then) {
                if (last_answer)
                    last_answer->next = j;
                else
                    answers = j;
                last_answer = j;
            } else {
                j->next = waiting;
                waiting = j;
            }
        }
        if (answers) {
            /* in commit order, after what was handed over before */
            pthread_mutex_lock(&st->alock);
            if (st->answers_tail)
                st->answers_tail->next = answers;
            else
                st->answers = answers;
            st->answers_tail = last_answer;
            pthread_cond_signal(&st->answers_queued);
            pthread_mutex_unlock(&st->alock);
        }
        pthread_mutex_lock(&st->gate);
        st->commits++;
        st->jobs_done += n;
        for (struct job *j = waiting, *next; j; j = next) {
            next = j->next; /* j is gone once its caller sees done */
            j->done = 1;
            pthread_cond_signal(&j->done_cv);
        }
    }
    pthread_mutex_unlock(&st->gate);
    return NULL;
}

/* The answerer: runs the callbacks of committed jobs, in commit order,
 * until the store closes with none left. */
static void *answerer(void *arg)
{
    struct store *st = arg;
    pthread_mutex_lock(&st->alock);
    for (;;) {
        while (!st->answers && !st->answers_closing)
            pthread_cond_wait(&st->answers_queued, &st->alock);
        struct job *j = st->answers;
        if (!j)
            break;
        st->answers = st->answers_tail = NULL;
        pthread_mutex_unlock(&st->alock);
        for (struct job *next; j; j = next) {
            next = j->next;
            j->then(j->ctx, j->rc);
            free(j);
        }
        pthread_mutex_lock(&st->alock);
    }
    pthread_mutex_unlock(&st->alock);
    return NULL;
}

/* Queues j, with gate held: 0, or -1 once the store is closing. */
static int enqueue(struct store *st, struct job *j)
{
    if (st->closing)
        return -1;
    if (st->jobs_tail)
        st->jobs_tail->next = j;
    else
        st->jobs = j;
    st->jobs_tail = j;
    pthread_cond_signal(&st->queued);
    return 0;
}

int db_submit(struct store *st, db_job_fn fn, void *arg, db_done_fn then, void *ctx)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    *j = (struct job){.fn = fn, .arg = arg, .rc = ST_ERROR, .then = then, .ctx = ctx};
    pthread_mutex_lock(&st->gate);
    int rc = enqueue(st, j);
    pthread_mutex_unlock(&st->gate);
    if (rc != 0)
        free(j);
    return rc;
}

int db_run(struct store *st, db_job_fn fn, void *arg)
{
    struct job j = {.fn = fn, .arg = arg, .rc = ST_ERROR};
    pthread_cond_init(&j.done_cv, NULL);
    pthread_mutex_lock(&st->gate);
    if (enqueue(st, &j) != 0) {
        pthread_mutex_unlock(&st->gate);
        pthread_cond_destroy(&j.done_cv);
        return ST_ERROR;
    }
    while (!j.done)
        pthread_cond_wait(&j.done_cv, &st->gate);
    pthread_mutex_unlock(&st->gate);
    pthread_cond_destroy(&j.done_cv);
    return j.rc;
}

void store_set_group_commit(struct store *st, int on)
{
    pthread_mutex_lock(&st->gate);
    st->solo = !on;
    pthread_mutex_unlock(&st->gate);
}

void db_counts(struct store *st, long *commits, long *jobs)
{
    pthread_mutex_lock(&st->gate);
    *commits = st->commits;
    *jobs = st->jobs_done;
    pthread_mutex_unlock(&st->gate);
}

/* a job that writes nothing: its batch writes the heartbeats first */
static int beats_written(struct store *st, void *arg)
{
    (void)arg;
    return st->beats_failed ? ST_ERROR : ST_OK;
}

int store_flush_beats(struct store *st)
{
    pthread_mutex_lock(&st->beats.lock);
    size_t n = st->beats.n_dirty;
    pthread_mutex_unlock(&st->beats.lock);
    if (!n)
        return ST_OK;
    return db_run(st, beats_written, NULL);
}


int store_integrity(struct store *st, char *buf, size_t len)
{
    struct conn *c = db_reader_get(st);
    sqlite3_stmt *s;
    int rc = -1;
    if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
            rc = 0;
        }
        sqlite3_finalize(s);
    }
    db_reader_put(st, c);
    return rc;
}

