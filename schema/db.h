/* Inside the store (the files of schema/ only; the API is store.h): its SQLite
 * connections, transactions and the helpers its files share. Every write
 * runs on the one writer connection under a mutex, in one BEGIN IMMEDIATE
 * transaction (db_begin .. db_end); reads take a connection of the pool.
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

struct conn {
    sqlite3 *db;
    struct {
        const char *sql;
        sqlite3_stmt *st;
    } st[DB_MAX_STMTS];
    int n_st;
    int busy;
};

struct store {
    struct conn writer;
    pthread_mutex_t wlock;
    struct conn *readers;
    int n_readers;
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
};

void db_log_sql(struct conn *c, const char *what);
/* The connection's prepared statement for sql (a static string: its address
 * is the key), reset and unbound; NULL when it cannot be prepared (logged). */
sqlite3_stmt *db_stmt(struct conn *c, const char *sql);
/* A read connection, waiting for one to be free; give it back with db_reader_put. */
struct conn *db_reader_get(struct store *st);
void db_reader_put(struct store *st, struct conn *c);
/* Runs one statement to completion: 0, or -1 (logged). */
int db_exec(struct conn *c, sqlite3_stmt *s);
/* Takes the writer and begins a write transaction: 0, or -1. */
int db_begin(struct store *st);
/* Ends the write transaction: ST_OK commits, anything else rolls back, so a
 * refused request leaves no trace. Returns rc, or ST_ERROR when the commit
 * failed. */
int db_end(struct store *st, int rc);
/* Steps sql, bound to id, onto its row: ST_OK with *out there, ST_NOTFOUND
 * when there is none, or ST_ERROR. */
int db_one_row(struct conn *c, const char *sql, int64_t id, sqlite3_stmt **out);
void db_bind_text(sqlite3_stmt *s, int i, const char *v);  /* NULL binds NULL */
json_t *db_col_json(sqlite3_stmt *s, int i);

/* workers.c: marks a worker heard from now; its rows as the API lists them. */
int db_touch_worker(struct conn *c, int64_t worker, double now);
json_t *db_worker_rows(struct conn *c, double lost_after);

/* leases.c: a run and its experiment, as reports and finishes see them. */
struct run_row {
    int active;       /* holds an unexpired lease */
    int64_t exp, worker;
    int cancel_req, world, attempts, max_attempts;
    char run_state[16], exp_state[16];
};
/* Begins a write transaction on a run: ST_OK with *r and *now read (the
 * transaction open), or the failure (ST_NOTFOUND, ST_ERROR) with the
 * transaction already ended. */
int db_begin_run(struct store *st, int64_t run, double *now, struct run_row *r);
/* Raises the experiment's progress to step. */
int db_advance_step(struct conn *c, int64_t exp, long step);
/* Ends a run as lost and queues its experiment again with an attempt spent
 * (failed after max_attempts, cancelled when asked). */
int db_requeue(struct conn *c, int64_t run, int64_t exp, int attempts, int max_attempts,
               int cancel_req, const char *reason, double now);

/* gangs.c: members of runs and the forming of gangs. */
int db_add_member(struct conn *c, int64_t run, int rank, int64_t worker, double expires, int told);
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
