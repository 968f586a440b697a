/* Inside the store (the files of schema/ only; the API is store.h): its SQLite
 * connections (conn.c), outages (outage.c), heartbeats (beats.c), the
 * store's transactions (db.c) and the helpers its files share. Every write
 * runs on the one writer connection, on the committer's thread, as a
 * savepoint of a BEGIN IMMEDIATE transaction that the writes arriving
 * together share (db_run: group commit, db.c); reads take a connection of
 * the pool. Which file may call which: ARCHITECTURE.md.
 * Each file keeps its SQL beside the code that runs it, as static strings
 * that db_stmt prepares once per connection; values are always bound. */
#ifndef COD_SCHEMA_DB_H
#define COD_SCHEMA_DB_H

#include <pthread.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "schema/store.h"

/* More than the store's statements, which are about fifty. */
#define DB_MAX_STMTS 96

/* outage.c: the latest failure from outside the store (the disk, another
 * process's lock), and how long to wait for such a lock. */
struct db_outage {
    pthread_mutex_t lock;
    double at;          /* store_now() when it was seen; 0: never */
    int code;           /* its SQLite result code */
    double lock_wait_s; /* the lock timeout */
};

struct conn {
    sqlite3 *db;
    struct {
        const char *sql;
        sqlite3_stmt *st;
    } st[DB_MAX_STMTS];
    int n_st;
    /* the statements handed out since they were last all reset: a job
     * uses a few of the fifty, and resetting the rest costs it more than
     * its own SQL */
    unsigned char used[DB_MAX_STMTS];
    int n_used, used_at[DB_MAX_STMTS];
    int busy;
    struct db_outage *outage; /* the store's */
};

struct job;
struct beat;

/* beats.c: heartbeats noted in memory, written with the next batch. */
struct beats {
    pthread_mutex_t lock;
    struct beat *tab;       /* open addressing by (run, rank) */
    size_t cap, n;
    size_t *dirty;          /* slots not yet written */
    size_t n_dirty, dirty_cap;
    double pruned;          /* when expired notes were last dropped */
    /* the notes the open transaction has written: until it commits, a
     * failed commit (a full disk) would lose them */
    struct beat *unsettled;
    size_t n_unsettled;
};
struct beat_note {
    int64_t run;
    int rank;
    int64_t worker, exp;
    double expires, seen;
    long step;
};
void beats_init(struct beats *b);
void beats_free(struct beats *b);
int beats_note(struct beats *b, const struct beat_note *n);
/* the rank's lease as heartbeats extended it; 0 when none was noted */
double beats_expiry(struct beats *b, int64_t run, int rank);

struct store {
    struct beats beats;
    struct conn writer;     /* the committer's alone while it runs */
    int beats_failed;       /* the batch's write of the heartbeats failed (committer's) */
    /* group commit (db.c), under gate: the writes waiting for the committer */
    pthread_mutex_t gate;
    long commits;
    long jobs_done;         /* write jobs run, each a request's write (or a reap) */
    pthread_cond_t queued;
    struct job *jobs, *jobs_tail;
    int solo;               /* group commit off: every request commits alone */
    int closing;
    pthread_t committer;
    int committer_started;
    /* the answerer (db.c), under alock: committed jobs whose callbacks are
     * yet to run */
    pthread_mutex_t alock;
    pthread_cond_t answers_queued;
    struct job *answers, *answers_tail;
    int answers_closing;
    pthread_t answerer;
    int answerer_started;
    struct conn *readers;
    int n_readers;
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
    struct db_outage outage;
};

/* chains.c: experiments that wait for others. link: the new experiment id
 * waits for after[0..n) (ST_INVALID, *bad the id, when one does not exist
 * or the chain would close on itself), its state set as they stand; links:
 * e's after and then (freed with it, whatever becomes of the call); cancel:
 * every experiment that waits on id cancelled (*n of them). */
int db_chain_link(struct conn *c, int64_t id, const int64_t *after, int n, double now,
                  int64_t *bad);
int db_chain_links(struct conn *c, int64_t id, struct exp_row *e);
int db_chain_cancel(struct conn *c, int64_t id, double now, int *n);

/* conn.c: a connection, its statements and its failures. */
int db_conn_open(struct conn *c, const char *path, int flags, struct db_outage *outage,
                 char *err, size_t errlen);
void db_conn_close(struct conn *c);
/* Logs c's latest SQLite failure, noting it as an outage where it is one. */
void db_log_sql(struct conn *c, const char *what);
/* The connection's prepared statement for sql (a static string: its address
 * is the key), reset and unbound; NULL when it cannot be prepared (logged). */
sqlite3_stmt *db_stmt(struct conn *c, const char *sql);
/* Resets the statements handed out since the last call: ends whatever is
 * still stepping, and with it a read transaction. */
void db_reset_used(struct conn *c);
/* Runs one statement to completion: 0, or -1 (logged). */
int db_exec(struct conn *c, sqlite3_stmt *s);
/* Steps sql, bound to id, onto its row: ST_OK with *out there, ST_NOTFOUND
 * when there is none, or ST_ERROR. */
int db_one_row(struct conn *c, const char *sql, int64_t id, sqlite3_stmt **out);
void db_bind_text(sqlite3_stmt *s, int i, const char *v);  /* NULL binds NULL */
json_t *db_col_json(sqlite3_stmt *s, int i);
/* A text column's copy, NULL for SQL NULL; *bad set when the copy failed. */
char *db_col_text(sqlite3_stmt *s, int i, int *bad);

/* outage.c */
void db_outage_init(struct db_outage *o);
void db_outage_destroy(struct db_outage *o);
/* Notes c's latest SQLite failure, seen at now, when the disk or another
 * process's lock caused it: db_log_sql for every failure the store logs,
 * and the reset of every statement that failed as a transaction or a read
 * ends. */
void db_outage_note(struct conn *c, double now);
/* The busy handler of every connection (conn is the struct conn): waits up
 * to the lock timeout for another connection's lock, saying so in the log. */
int db_lock_wait(void *conn, int tries);

/* beats.c: writes the heartbeats noted since the last call into the open
 * write transaction of c: 0, or -1. db_beats_settle says whether that
 * transaction committed: if not, the notes it held are to be written again. */
int db_beats_flush(struct beats *b, struct conn *c, double now);
void db_beats_settle(struct beats *b, int committed);

/* db.c: a read connection, waiting for one to be free; give it back with
 * db_reader_put. */
struct conn *db_reader_get(struct store *st);
void db_reader_put(struct store *st, struct conn *c);
/* A write: runs on the committer's thread, in a savepoint of the batch's
 * transaction on st->writer; returns ST_OK to keep what it wrote, anything
 * else to undo it (a refused request leaves no trace). It must not call
 * db_run. */
typedef int (*db_job_fn)(struct store *st, void *arg);
typedef void (*db_done_fn)(void *ctx, int rc);
/* Runs fn(st, arg) with the writes queued beside it, and returns once its
 * batch is committed (on disk): fn's result, or ST_ERROR when the batch
 * could not be committed. */
int db_run(struct store *st, db_job_fn fn, void *arg);
/* db_run without the wait: then(ctx, rc) is called once the batch is
 * committed, on the store's answering thread (never the committer's, which
 * has gone on to the next batch meanwhile). 0, or -1 (out of memory, the
 * store closing) when nothing was queued. */
int db_submit(struct store *st, db_job_fn fn, void *arg, db_done_fn then, void *ctx);
/* How many batches the writer has committed (fsyncs, at most), and how
 * many write jobs they held. */
void db_counts(struct store *st, long *commits, long *jobs);

/* workers.c: marks a worker heard from now; the rows of the workers. */
int db_touch_worker(struct conn *c, int64_t worker, double now);
int db_worker_rows(struct conn *c, double lost_after, struct worker_row **rows, int *n);

/* runs.c: a run and its experiment, as reports and finishes see them. */
struct run_row {
    int active;       /* holds an unexpired lease */
    int64_t exp, worker;
    int cancel_req, world, attempts, max_attempts;
    char run_state[16], exp_state[16];
};
/* In a write (db_run): the run's row, with *now the time it was read:
 * ST_OK, ST_NOTFOUND or ST_ERROR. */
int db_run_row(struct store *st, int64_t run, double *now, struct run_row *r);
/* Raises the experiment's progress to step. */
int db_advance_step(struct conn *c, int64_t exp, long step);
/* Ends a run as lost and queues its experiment again with an attempt spent
 * (failed after max_attempts, cancelled when asked). */
int db_requeue(struct conn *c, int64_t run, int64_t exp, int attempts, int max_attempts,
               int cancel_req, const char *reason, double now);

/* secrets.c: a new secret (STORE_SECRET_SIZE bytes): 0, or -1 when the
 * kernel gave no randomness. */
int db_new_secret(char *out);

/* gangs.c: members of runs and the forming of gangs. A member's lease gets
 * a secret when its worker has one (with_secret: a worker registered before
 * secrets has none, and neither have its leases), copied to secret (unless
 * NULL; "" when none). */
int db_add_member(struct conn *c, int64_t run, int rank, int64_t worker, double expires, int told,
                  int with_secret, char *secret);
int db_member_worker(struct conn *c, int64_t run, int rank, int64_t *worker);
/* the rank's lease to expires, and the run's to the earliest of its ranks' */
int db_extend_member(struct conn *c, int64_t run, int rank, double expires);
int db_not_waiting(struct conn *c, int64_t worker);
/* cuda workers heard from since `since`, not stopped or removed */
int db_live_cuda_workers(struct conn *c, double since, int *n);
/* A run of n ranks for exp from the waiting cuda workers, packed onto the
 * fewest hosts: *run is 0 when fewer than n wait; members[rank] the workers. */
int db_form_gang(struct conn *c, int64_t exp, int n, double now, double lease_s,
                 double rendezvous_s, int64_t *run, int64_t *members);
int db_reap_rendezvous(struct conn *c, double now, double rendezvous_s, int *n);

#endif
