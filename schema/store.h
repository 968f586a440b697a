/* The store: cod-server's only door to SQLite. Every write goes through
 * one connection under a mutex and runs in one BEGIN IMMEDIATE transaction
 * with synchronous=FULL, so a returned ST_OK means the change is on disk;
 * reads use a small pool of read connections. Experiments, sweeps, workers
 * and the /metrics counts come back as rows, which views/ shapes; the
 * metrics and logs still as jansson objects, ready for the API to send. Where each part lives: db.c
 * connections and transactions, queue.c submissions and cancel, leases.c
 * the lease policy (lease, heartbeat, finish, the reaper), workers.c the
 * worker registry, metrics.c points and logs in and out, views.c an
 * experiment's rows and the /metrics counts, sweeps.c a sweep's cells and the points
 * its groups average (their statistics: views/); the tables are schema.sql
 * and its migrations (migrate.c). */
#ifndef COD_STORE_H
#define COD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum store_rc {
    ST_OK = 0,
    ST_NOTFOUND = 1,  /* no such experiment, run, worker or sweep */
    ST_CONFLICT = 2,  /* the state forbids it (lost lease, finished experiment) */
    ST_INCOMPLETE = 3, /* "succeeded" while points of the run are missing */
    ST_INVALID = 4,   /* a rank the run does not have; a second rendezvous id */
    ST_ERROR = -1,    /* SQLite failed; logged (store_unavailable_since tells
                         the disk's and other processes' locks from the rest) */
};

struct store;

/* The WAL grows while a long read (a report, a backup) holds its
 * snapshot; once it is folded back, the file is cut to this size so that
 * one burst does not keep its size on disk for as long as the server runs.
 * Above the ~4 MiB the WAL reaches between checkpoints. */
#define STORE_WAL_LIMIT_BYTES (16LL << 20)

/* Opens (creating if needed) the database, applies migrations, starts WAL. */
int store_open(const char *path, int readers, struct store **out, char *err, size_t errlen);
void store_close(struct store *st);
/* PRAGMA integrity_check's verdict ("ok" when sound) into buf. */
int store_integrity(struct store *st, char *buf, size_t len);

struct new_experiment {
    const char *name, *model, *norm, *device, *spec_json;
    const char *cell_json;   /* a sweep cell's grid values, or NULL */
    int gpus, priority, max_attempts;
    long steps;
    /* Chains (docs/api.md): the experiments it waits for, which must exist
     * (ST_INVALID otherwise, or when they would wait for it); it starts
     * waiting, queued, or blocked as they stand. model and norm NULL: those
     * of the experiment it starts from (start). A sweep's later stage
     * (stage > 0) waits for the row before it and starts from its final
     * checkpoint, its spec's init.from.experiment set to that row's id. */
    const int64_t *after;
    int n_after;
    int64_t start;
    int stage;
};

/* With an idempotency key already used for the same request, *replayed is
 * set and *id is the experiment (or sweep) that key created; used for a
 * different request: ST_CONFLICT. Either way nothing is written. */
int store_create_experiment(struct store *st, const struct new_experiment *e, const char *idem_key,
                            int64_t *id, int *replayed);
int store_create_sweep(struct store *st, const char *body, const char *idem_key,
                       const struct new_experiment *cells, int n, int64_t *sweep_id, int *replayed);

struct exp_filter {
    const char *state, *norm, *model;
    int64_t sweep;    /* 0: any */
    int64_t before;   /* cursor: ids below this; 0: from the newest */
    int limit;
};
/* An experiment that one waits for, or one that waits for it. */
struct exp_link {
    int64_t id;
    char *name, *state;
};
/* A scalar's newest point. */
struct latest_point {
    char *name;
    int64_t step;
    int has_value;    /* 0: a non-finite value */
    double value;
};
/* An experiment's row, as stored (views/experiment.c makes its view). */
struct exp_row {
    int64_t id;
    char *name, *model, *norm, *device, *state;
    char *reason;                /* NULL when none */
    int64_t sweep, run, worker;  /* 0 when none */
    int attempts, max_attempts, priority, cancel_req, stage;
    int64_t step, steps;
    double created, started, finished;
    int has_started, has_finished;
    /* store_list_experiments: the ids it waits for, as a JSON array's text */
    char *after_ids;
    /* store_get_experiment: the experiments it waits for and those that
     * wait for it, its spec (JSON text) and its scalars' newest points */
    struct exp_link *after, *then;
    int n_after, n_then;
    char *spec;
    struct latest_point *latest;
    int n_latest;
};
void exp_row_free(struct exp_row *e);
/* ST_OK with *out filled (free it with exp_row_free), ST_NOTFOUND, ST_ERROR. */
int store_get_experiment(struct store *st, int64_t id, struct exp_row *out);
/* Up to f->limit rows, newest first, into *rows (each freed with
 * exp_row_free, then the array); *more: a next page exists. */
int store_list_experiments(struct store *st, const struct exp_filter *f, struct exp_row **rows,
                           int *n, int *more);
/* queued → cancelled now; running → flagged, cancelled at the next heartbeat. */
int store_cancel(struct store *st, int64_t id);
/* The experiment and every one that waits on it, directly or through
 * others, cancelled as store_cancel does (what has finished stays as it
 * is); *n: how many wait on it. ST_NOTFOUND for no such experiment. */
int store_cancel_chain(struct store *st, int64_t id, int *n);

/* Group commit (on by default): the writes that arrive together share one
 * transaction and one fsync, and none is answered before it is on disk.
 * Off, every request commits alone (what it costs: bench/RESULTS.md). */
void store_set_group_commit(struct store *st, int on);

/* A secret (docs/api.md, "Threat model"): 32 hex digits of the kernel's
 * randomness; "" for a worker or rank made before secrets existed. */
#define STORE_SECRET_SIZE 33

/* Worker states, from what the server last heard of a worker: offline (it
 * said it stopped), lost (silent for longer than lost_after, the lease
 * length), busy (holds a run), idle. Registration gives the worker its
 * secret (secret, STORE_SECRET_SIZE bytes, or NULL). */
int store_register_worker(struct store *st, const char *name, const char *device, int capacity,
                          const char *host, int64_t *id, char *secret);
/* The secret a worker was given ("" for one registered before secrets):
 * ST_OK, or ST_NOTFOUND. */
int store_worker_secret(struct store *st, int64_t worker, char *secret, size_t n);
/* The secret the lease of a run's rank gave ("" for one leased before
 * secrets): ST_OK, ST_NOTFOUND (no such run) or ST_INVALID (no such rank). */
int store_member_secret(struct store *st, int64_t run, int rank, char *secret, size_t n);
/* The worker says it stops: offline for good, it leases nothing more (a
 * worker that comes back registers anew). */
int store_worker_offline(struct store *st, int64_t worker);
/* Removes a worker that is gone (offline or lost) and holds no run: it is
 * never listed again, and must register anew to lease. ST_CONFLICT when it
 * is not gone: state (idle, busy, or offline/lost with *runs still to
 * lapse) says how it is. */
int store_remove_worker(struct store *st, int64_t worker, double lost_after, char *state,
                        size_t n, int *runs);
/* The largest gang a run may have. */
enum { GANG_MAX = 4096 };

struct lease_policy {
    double lease_s;       /* a lease's length */
    double wait_until;    /* the asking worker's long-poll deadline: it counts as
                             waiting, a candidate for a gang, until then */
    double rendezvous_s;  /* how long a new gang has to meet */
};
/* How stale a worker's last_seen may grow before a lease pass writes it
 * again: a quarter lease, at most 5 s. A parked long-poll is passed again
 * at least this often (api/longpoll.c), so a waiting worker stays live. */
double store_touch_s(double lease_s);
/* A lease granted to one rank. The spec is the experiment's as stored
 * (JSON text, written by the server itself), for the answer to embed as
 * it is: parsing it only to print it again was a fifth of a lease's cost. */
struct lease {
    int64_t run, experiment;
    int attempt, rank, world_size;
    double lease_s;
    char secret[STORE_SECRET_SIZE]; /* the rank's, for the run's calls */
    char *spec;           /* NULL: no lease */
};
void lease_free(struct lease *l);
/* What a lease pass found the asking worker able to take now: a long-poll
 * parked after it is woken only for such work (api/longpoll.c). */
enum lease_takes { TAKES_NOTHING, TAKES_CPU, TAKES_CUDA };
/* Claims the best queued experiment the worker can run (priority, then
 * FIFO; leases.c says how gangs are formed and held). out->spec is NULL
 * when there is none yet; *formed says a gang was just formed, whose
 * other ranks are waiting to be told; *takes (unless NULL) is what the
 * worker could take (enum lease_takes: nothing while its slots are full). */
int store_lease(struct store *st, int64_t worker, const struct lease_policy *p, struct lease *out,
                int *formed, int *takes);
/* store_lease without waiting for it: then(ctx, rc) is called, on the
 * store's own thread, once the lease is on disk or has failed (out and
 * formed, takes must live until then). ST_OK, or ST_ERROR when it could not be
 * started (then is not called). */
int store_lease_start(struct store *st, int64_t worker, const struct lease_policy *p,
                      struct lease *out, int *formed, int *takes, void (*then)(void *ctx, int rc),
                      void *ctx);
/* A rank's heartbeat: extends its lease (a gang's run lasts while every
 * rank's does); ST_INVALID for a rank the run does not have. The extension
 * is noted in memory and written with the next write (schema/beats.c):
 * a heartbeat waits for no fsync, and store_grace covers what a crash
 * loses of them. */
int store_heartbeat(struct store *st, int64_t run, int rank, long step, double lease_s,
                    int *cancel);
/* Writes the heartbeats noted since the last write, when there are any:
 * for a server where nothing else writes, every BEATS_FLUSH_S. */
#define BEATS_FLUSH_S 0.1
int store_flush_beats(struct store *st);
/* At start: every running lease gets at least lease_s from now, so that
 * the heartbeats a stopped server held only in memory cost no lease. */
int store_grace(struct store *st, double lease_s);
/* A gang's rendezvous: rank 0 posts its communicator id once (the same id
 * again is a retry; another is ST_INVALID; a run that has ended ST_CONFLICT);
 * get copies it into id, empty while none has been posted. */
int store_rendezvous_set(struct store *st, int64_t run, const char *id);
int store_rendezvous_get(struct store *st, int64_t run, char *id, size_t len);

struct metric_point {
    const char *name;
    long step;
    int layer;        /* -1 for scalars */
    double value;
    int is_null;      /* non-finite at the source */
};
struct log_line {
    long seq;
    const char *line;
};
int store_report(struct store *st, int64_t run, const struct metric_point *pts, int n,
                 const struct log_line *lines, int nl);
/* What the server holds of an experiment's points when a run finishes. */
struct points_held {
    long final_step;  /* the experiment's last step */
    int final_loss;   /* train/loss at final_step is stored */
    long points;      /* every point stored for the experiment */
};
/* How a run ends: outcome succeeded, failed, cancelled, or released (back
 * to the queue without spending an attempt). "succeeded" is refused with
 * ST_INCOMPLETE, *held saying what is there, unless train/loss at the final
 * step is stored and at least `points` points (what the worker's files
 * hold; 0 when it did not say). In a gang, rank 0 says what became of the
 * experiment; another rank's "failed" (or any "failed" with retry: the
 * machinery failed, not the experiment) ends the run and queues the
 * experiment again with an attempt spent; its "released" gives the run
 * back; its "succeeded" and "cancelled" change nothing. *worker: the
 * rank's worker, whose capacity the run's end freed (0 when nothing
 * changed). */
struct finish {
    int64_t run;
    int rank;
    const char *outcome, *reason;
    long points;
    int retry;
};
int store_finish(struct store *st, const struct finish *f, struct points_held *held,
                 int64_t *worker);
/* Sends every lapsed lease, and every gang that has not met within
 * rendezvous_s, back to the queue (or to failed); *expired counts them. */
int store_reap(struct store *st, double rendezvous_s, int *expired);

int store_metrics(struct store *st, int64_t exp, const char *name, long from, long to, long every,
                  json_t **out);
int store_layers(struct store *st, int64_t exp, const char *name, long step, json_t **out);
/* Every step of a per-layer series: {"steps": [s…], "values": [[v of layer 0, 1, …] per step]}. */
int store_layer_history(struct store *st, int64_t exp, const char *name, json_t **out);
int store_logs(struct store *st, int64_t exp, int64_t after, int limit, json_t **out);
/* A sweep's rows, as stored (views/sweep.c makes its view of them). A
 * number the store does not hold (no such point yet, or a non-finite one)
 * has its has_ flag 0. */
struct sweep_cell {
    int64_t experiment;
    int stage;            /* 0: a pretraining cell; above: its later stages */
    char *state;
    char *reason, *name;  /* NULL when none */
    char *params;         /* the cell's grid values, JSON text; NULL when none */
    /* stage 0: the newest eval/ppl (with its step) and eval/loss */
    int has_ppl, has_step, has_loss;
    double ppl, loss;
    int64_t step;
    /* later stages: the newest task/NAME/MEASURE values, as a JSON object's text */
    char *tasks;
};
struct sweep_rows {
    double created;
    char *body;           /* the sweep as submitted, JSON text */
    struct sweep_cell *cells, *stages;  /* in id order */
    int n_cells, n_stages;
};
/* ST_OK with *out filled (free it with sweep_rows_free), ST_NOTFOUND, ST_ERROR. */
int store_sweep(struct store *st, int64_t id, struct sweep_rows *out);
void sweep_rows_free(struct sweep_rows *r);
/* Every point of the metric name of the experiments exps[0..n), sorted by
 * (step, layer), each handed to fn (a non-finite value has is_null set);
 * fn's nonzero stops the read, which then returns ST_ERROR. */
typedef int (*store_point_fn)(void *ctx, int64_t step, int64_t layer, int is_null, double value);
int store_points_of(struct store *st, const int64_t *exps, int n, const char *name,
                    store_point_fn fn, void *ctx);
/* A worker as the registry holds it (views/workers.c makes its view). */
struct worker_row {
    int64_t id;
    char *name, *device;
    char *host;              /* NULL for one registered before hosts were kept */
    int capacity;
    double registered, heartbeat_age_s;
    const char *state;       /* offline, lost, busy or idle: a static string */
    int waiting;             /* parked in a lease long-poll, a candidate for a gang */
    int64_t *experiments;    /* those its active runs hold */
    int n_experiments;
};
void worker_rows_free(struct worker_row *w, int n);
/* Every worker not removed, by id; *rows freed with worker_rows_free. */
int store_workers(struct store *st, double lost_after, struct worker_row **rows, int *n);
/* Counts for /metrics: experiments by state, the workers, lease expiries,
 * and the newest loss and throughput of each running experiment. */
struct state_count {
    char *state;
    int64_t n;
};
struct running_row {
    int64_t id;
    char *model, *norm;
    int has_loss, has_tokens_per_s;
    double loss, tokens_per_s;
};
struct store_counts {
    struct state_count *states;
    int n_states;
    struct worker_row *workers;
    int n_workers;
    struct running_row *running;
    int n_running;
    int64_t lease_expiries;
    long commits, jobs, fsyncs;
};
void store_counts_free(struct store_counts *k);
int store_stats(struct store *st, double lost_after, struct store_counts *out);

double store_now(void);

/* Whether the database was unavailable at some moment since `since` (a
 * store_now() time): a read or write failed then because the disk failed
 * or was full, or another process held a lock on the database past the
 * lock timeout. 1 with why (SQLite's words: "disk I/O error", "database or
 * disk is full", "database is locked"); 0 when nothing of the kind was
 * seen, so that an ST_ERROR since was the store's own. */
int store_unavailable_since(struct store *st, double since, char *why, size_t len);
/* How long a statement waits for a lock another process holds on the
 * database (an sqlite3 shell's BEGIN IMMEDIATE, a VACUUM) before it fails;
 * 10 s unless set. */
void store_set_lock_timeout(struct store *st, double seconds);

#endif
