/* The lease policy: which queued experiment a worker gets (priority,
 * then FIFO; a worker's device and free capacity decide what fits), how a
 * lease is kept (heartbeats, a rank at a time), how a run ends (finish:
 * succeeded only with every point stored, released back to the queue
 * without spending an attempt), and what happens to a lease that lapses
 * (the reaper: queued again with attempts+1, or failed after max_attempts).
 *
 * Gangs (gangs.c forms them): an experiment with gpus N > 1 goes to N
 * cuda workers at once, one rank (one GPU) each, all or nothing. While such
 * a gang heads the cuda queue it holds every cuda worker that asks (each
 * waits, parked in its long-poll, until the gang is whole), as long as
 * enough live cuda workers exist to ever form it; when they do not, it is
 * passed over and the worker takes the best one-GPU job. Nothing is
 * backfilled while a gang collects: with no run times known, any job run
 * meanwhile could delay it. CPU workers are never held. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device_name.h"

/* An offline or removed worker leases nothing: a long-poll it left parked
 * when it stopped must not claim work for it. With the worker, in one
 * statement, what a lease needs to know of it: the runs it holds (on a
 * cuda worker, a GPU each), and what it last wrote, so that a write that
 * would change nothing is not run at all (the committer's time is what
 * bounds leases/s). */
static const char q_worker[] =
    "SELECT w.device, w.capacity, w.last_seen, w.waiting_until,"
    " (SELECT count(*) FROM run_members m WHERE m.worker_id = w.id AND m.active = 1),"
    " w.secret IS NOT NULL"
    " FROM workers w WHERE w.id = ?1 AND w.removed IS NULL AND w.stopped IS NULL";
/* a rank of a gang formed while the worker was parked, not yet answered */
static const char q_untold[] =
    "SELECT m.run_id, m.rank, r.world_size, r.experiment_id, e.attempts, e.spec,"
    " coalesce(m.secret, '')"
    " FROM run_members m JOIN runs r ON r.id = m.run_id"
    " JOIN experiments e ON e.id = r.experiment_id"
    " WHERE m.worker_id = ?1 AND m.active = 1 AND m.told = 0 ORDER BY m.run_id LIMIT 1";
static const char q_tell[] =
    "UPDATE run_members SET told = 1 WHERE run_id = ?1 AND rank = ?2";
/* the head of the worker's queue; a CPU worker never takes a gang */
static const char q_head[] =
    "SELECT id, attempts, spec, gpus FROM experiments WHERE state = 'queued'"
    " AND (device = 'any' OR device = ?1) AND (?1 = 'cuda' OR gpus <= 1)"
    " ORDER BY priority DESC, id LIMIT 1";
static const char q_claim_one[] =
    "SELECT id, attempts, spec, gpus FROM experiments WHERE state = 'queued'"
    " AND (device = 'any' OR device = ?1) AND gpus <= 1"
    " ORDER BY priority DESC, id LIMIT 1";
/* A parked long-poll runs again at every wake: what it writes is written
 * only when it changes, so that a pass that claims nothing commits nothing
 * (no fsync) */
static const char q_wait[] =
    "UPDATE workers SET waiting_until = ?2 WHERE id = ?1";
static const char q_insert_run[] =
    "INSERT INTO runs (experiment_id, worker_id, state, started, lease_expires)"
    " VALUES (?1, ?2, 'active', ?3, ?4)";
static const char q_start_exp[] =
    "UPDATE experiments SET state = 'running', run_id = ?2,"
    " started = coalesce(started, ?3) WHERE id = ?1";
/* a heartbeat's check, on a read connection */
static const char q_beat[] =
    "SELECT r.state, m.lease_expires, e.cancel_req, r.experiment_id, m.worker_id"
    " FROM runs r JOIN experiments e ON e.id = r.experiment_id"
    " LEFT JOIN run_members m ON m.run_id = r.id AND m.rank = ?2 WHERE r.id = ?1";
static const char q_end_run[] =
    "UPDATE runs SET state = 'ended' WHERE id = ?1";
static const char q_end_exp[] =
    "UPDATE experiments SET state = ?2, reason = ?3, finished = ?4, run_id = NULL"
    " WHERE id = ?1";
static const char q_points_held[] =
    "SELECT e.steps, (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id"
    " AND m.name = 'train/loss' AND m.layer = -1 AND m.step = e.steps),"
    " (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id)"
    " FROM experiments e WHERE e.id = ?1";
static const char q_release[] =
    "UPDATE experiments SET state = CASE WHEN cancel_req THEN 'cancelled' ELSE 'queued' END,"
    " reason = ?2, run_id = NULL, finished = CASE WHEN cancel_req THEN ?3 END WHERE id = ?1";
static const char q_lapsed[] =
    "SELECT r.id, r.experiment_id, e.attempts, e.max_attempts, e.cancel_req,"
    " (SELECT m.worker_id FROM run_members m WHERE m.run_id = r.id"
    "  ORDER BY m.lease_expires LIMIT 1), r.world_size"
    " FROM runs r JOIN experiments e ON e.id = r.experiment_id"
    " WHERE r.state = 'active' AND r.lease_expires < ?1";
static const char q_bump_counter[] =
    "UPDATE counters SET value = value + ?2 WHERE name = ?1";
/* a restart's grace (store_grace): every running lease extended by a full
 * lease, so that the reaper of a server that was down takes none from a
 * worker that beat meanwhile */
static const char q_grace_members[] =
    "UPDATE run_members SET lease_expires = max(lease_expires, ?1)"
    " WHERE run_id IN (SELECT id FROM runs WHERE state = 'active')";
static const char q_grace_runs[] =
    "UPDATE runs SET lease_expires = max(lease_expires, ?1) WHERE state = 'active'";

void lease_free(struct lease *l)
{
    free(l->spec);
    l->spec = NULL;
}

/* The lease of a run's rank; -1 when out of memory. */
static int lease_answer(int64_t run, int64_t exp, int attempts, double lease_s,
                        const char *spec_text, int rank, int world, struct lease *out)
{
    char *spec = strdup(spec_text ? spec_text : "null");
    if (!spec)
        return -1;
    *out = (struct lease){run, exp, attempts + 1, rank, world, lease_s, "", spec};
    return 0;
}

/* One worker takes experiment exp alone (rank 0 of 1). */
static int lease_alone(struct conn *c, int64_t worker, int with_secret, int64_t exp, double now,
                       double lease_s, int64_t *run, char *secret)
{
    sqlite3_stmt *s = db_stmt(c, q_insert_run);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, worker);
    sqlite3_bind_double(s, 3, now);
    sqlite3_bind_double(s, 4, now + lease_s);
    if (db_exec(c, s) != 0)
        return -1;
    *run = sqlite3_last_insert_rowid(c->db);
    return db_add_member(c, *run, 0, worker, now + lease_s, 1, with_secret, secret);
}

static int start_experiment(struct conn *c, int64_t exp, int64_t run, double now)
{
    sqlite3_stmt *s = db_stmt(c, q_start_exp);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, run);
    sqlite3_bind_double(s, 3, now);
    return db_exec(c, s);
}

/* The worker's rank of a gang formed for it while it waited: answered once. */
static int take_untold(struct conn *c, int64_t worker, double now, double lease_s,
                       struct lease *out)
{
    sqlite3_stmt *s = db_stmt(c, q_untold);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, worker);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return 0;
    if (rc != SQLITE_ROW)
        return -1;
    int64_t run = sqlite3_column_int64(s, 0), exp = sqlite3_column_int64(s, 3);
    int rank = sqlite3_column_int(s, 1), world = sqlite3_column_int(s, 2),
        attempts = sqlite3_column_int(s, 4);
    struct lease answer;
    if (lease_answer(run, exp, attempts, lease_s, (const char *)sqlite3_column_text(s, 5), rank,
                     world, &answer) != 0)
        return -1;
    snprintf(answer.secret, sizeof answer.secret, "%s", (const char *)sqlite3_column_text(s, 6));
    if (!(s = db_stmt(c, q_tell))) {
        lease_free(&answer);
        return -1;
    }
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_int(s, 2, rank);
    if (db_exec(c, s) != 0 || db_extend_member(c, run, rank, now + lease_s) != 0 ||
        db_not_waiting(c, worker) != 0) {
        lease_free(&answer);
        return -1;
    }
    *out = answer;
    return 0;
}

static int lease(struct store *st, int64_t worker, const struct lease_policy *p, struct lease *out,
                 int *formed, int *takes)
{
    struct conn *c = &st->writer;
    double now = store_now();
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_worker, worker, &s);
    if (rc != ST_OK)
        return rc;
    char device[16];
    snprintf(device, sizeof device, "%s", (const char *)sqlite3_column_text(s, 0));
    int capacity = sqlite3_column_int(s, 1), held = sqlite3_column_int(s, 4),
        with_secret = sqlite3_column_int(s, 5);
    double last_seen = sqlite3_column_double(s, 2), waiting = sqlite3_column_double(s, 3);
    int is_cuda = !strcmp(device, "cuda");
    if (takes)
        *takes = held >= capacity ? TAKES_NOTHING : is_cuda ? TAKES_CUDA : TAKES_CPU;
    /* last_seen a little stale is still recent */
    if (last_seen < now - store_touch_s(p->lease_s) && db_touch_worker(c, worker, now) != 0)
        return ST_ERROR;
    /* only a cuda worker is ever given a rank of a gang */
    if (is_cuda && take_untold(c, worker, now, p->lease_s, out) != 0)
        return ST_ERROR;
    if (out->spec)
        return ST_OK;
    if (held >= capacity)
        return ST_OK;  /* commits at most the last_seen touch */
    /* parked from now until its deadline: what a gang is collected from */
    double wait_until = is_cuda ? p->wait_until : 0;
    if (wait_until != waiting) {
        if (!(s = db_stmt(c, q_wait)))
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, worker);
        sqlite3_bind_double(s, 2, wait_until);
        if (db_exec(c, s) != 0)
            return ST_ERROR;
    }
    if (!(s = db_stmt(c, q_head)))
        return ST_ERROR;
    sqlite3_bind_text(s, 1, device, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return ST_OK;
    if (rc != SQLITE_ROW)
        return ST_ERROR;
    int64_t exp = sqlite3_column_int64(s, 0);
    int gpus = sqlite3_column_int(s, 3);
    if (gpus > 1) {
        int live = 0;
        if (db_live_cuda_workers(c, now - p->lease_s, &live) != 0)
            return ST_ERROR;
        if (live >= gpus) {
            int64_t run, members[GANG_MAX];
            if (gpus > GANG_MAX || db_form_gang(c, exp, gpus, now, p->lease_s, p->rendezvous_s,
                                                &run, members) != 0)
                return ST_ERROR;
            if (!run) /* held for the gang: nothing for this worker meanwhile */
                return ST_OK;
            if (start_experiment(c, exp, run, now) != 0 ||
                take_untold(c, worker, now, p->lease_s, out) != 0)
                return ST_ERROR;
            *formed = 1;
            return ST_OK;
        }
        /* the gang cannot form with the workers there are: pass it over */
        if (!(s = db_stmt(c, q_claim_one)))
            return ST_ERROR;
        sqlite3_bind_text(s, 1, device, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
            return ST_OK;
        if (rc != SQLITE_ROW)
            return ST_ERROR;
        exp = sqlite3_column_int64(s, 0);
    }
    int attempts = sqlite3_column_int(s, 1);
    struct lease answer;
    if (lease_answer(0, exp, attempts, p->lease_s, (const char *)sqlite3_column_text(s, 2), 0, 1,
                     &answer) != 0)
        return ST_ERROR;
    if (lease_alone(c, worker, with_secret, exp, now, p->lease_s, &answer.run, answer.secret) != 0 ||
        start_experiment(c, exp, answer.run, now) != 0 ||
        (wait_until != 0 && db_not_waiting(c, worker) != 0)) {
        lease_free(&answer);
        return ST_ERROR;
    }
    *out = answer;
    return ST_OK;
}

double store_touch_s(double lease_s)
{
    return lease_s / 4 < 5 ? lease_s / 4 : 5;
}

struct lease_job {
    int64_t worker;
    const struct lease_policy *p;
    struct lease *out;
    int *formed, *takes;
};

static int lease_job(struct store *st, void *arg)
{
    struct lease_job *j = arg;
    return lease(st, j->worker, j->p, j->out, j->formed, j->takes);
}

/* After the commit: a lease whose batch failed was not made durable, and
 * what the job took is given back. */
static void lease_settle(struct lease_job *j, int rc)
{
    if (rc == ST_OK)
        return;
    lease_free(j->out);
    *j->out = (struct lease){0};
    *j->formed = 0;
}

/* store_lease_start's: the job, the policy it points to, the caller's callback */
struct lease_start {
    struct lease_job j;
    struct lease_policy p;
    db_done_fn then;
    void *ctx;
};

static void lease_started(void *arg, int rc)
{
    struct lease_start *ls = arg;
    lease_settle(&ls->j, rc);
    ls->then(ls->ctx, rc);
    free(ls);
}

int store_lease_start(struct store *st, int64_t worker, const struct lease_policy *p,
                      struct lease *out, int *formed, int *takes, void (*then)(void *ctx, int rc),
                      void *ctx)
{
    *out = (struct lease){0};
    *formed = 0;
    struct lease_start *ls = malloc(sizeof *ls);
    if (!ls)
        return ST_ERROR;
    *ls = (struct lease_start){{worker, NULL, out, formed, takes}, *p, then, ctx};
    ls->j.p = &ls->p;
    if (db_submit(st, lease_job, &ls->j, lease_started, ls) != 0) {
        free(ls);
        return ST_ERROR;
    }
    return ST_OK;
}

int store_lease(struct store *st, int64_t worker, const struct lease_policy *p, struct lease *out,
                int *formed, int *takes)
{
    *out = (struct lease){0};
    *formed = 0;
    struct lease_job j = {worker, p, out, formed, takes};
    int rc = db_run(st, lease_job, &j);
    lease_settle(&j, rc);
    return rc;
}

static int end_experiment(struct conn *c, int64_t run, int64_t exp, const char *state,
                          const char *reason, double now)
{
    sqlite3_stmt *s = db_stmt(c, q_end_run);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_end_exp)))
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, state, -1, SQLITE_TRANSIENT);
    db_bind_text(s, 3, reason);
    sqlite3_bind_double(s, 4, now);
    return db_exec(c, s);
}

/* A heartbeat that finds the experiment cancelled: rank 0 ends the run, in
 * a write transaction. */
static int cancelled(struct store *st, int64_t run, int rank, long step, double lease_s,
                     int *cancel)
{
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int rc = db_run_row(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    if (!r.active)
        return ST_CONFLICT;
    int64_t member;
    if ((rc = db_member_worker(c, run, rank, &member)) != ST_OK)
        return rc == ST_NOTFOUND ? ST_INVALID : rc;
    if (db_touch_worker(c, member, now) != 0 || db_advance_step(c, r.exp, step) != 0)
        return ST_ERROR;
    if (r.cancel_req) {
        *cancel = 1;
        /* rank 0 ends it, after the gang has stopped at its checkpoint */
        if (rank == 0 &&
            end_experiment(c, run, r.exp, "cancelled", "cancelled while running", now) != 0)
            return ST_ERROR;
        if (rank == 0)
            return ST_OK;
    }
    return db_extend_member(c, run, rank, now + lease_s) == 0 ? ST_OK : ST_ERROR;
}

struct beat_job {
    int64_t run;
    int rank;
    long step;
    double lease_s;
    int *cancel;
};

static int cancelled_job(struct store *st, void *arg)
{
    struct beat_job *b = arg;
    return cancelled(st, b->run, b->rank, b->step, b->lease_s, b->cancel);
}

static int heartbeat_cancelled(struct store *st, int64_t run, int rank, long step, double lease_s,
                               int *cancel)
{
    *cancel = 0;
    struct beat_job b = {run, rank, step, lease_s, cancel};
    return db_run(st, cancelled_job, &b);
}

int store_heartbeat(struct store *st, int64_t run, int rank, long step, double lease_s,
                    int *cancel)
{
    *cancel = 0;
    double now = store_now();
    struct conn *c = db_reader_get(st);
    sqlite3_stmt *s = db_stmt(c, q_beat);
    int rc = ST_ERROR, step_rc = SQLITE_ERROR;
    int active = 0, cancel_req = 0, member = 0;
    struct beat_note n = {.run = run, .rank = rank, .expires = now + lease_s, .seen = now,
                          .step = step};
    double expires = 0;
    if (s) {
        sqlite3_bind_int64(s, 1, run);
        sqlite3_bind_int(s, 2, rank);
        step_rc = sqlite3_step(s);
    }
    if (step_rc == SQLITE_ROW) {
        active = !strcmp((const char *)sqlite3_column_text(s, 0), "active");
        member = sqlite3_column_type(s, 1) != SQLITE_NULL;
        expires = sqlite3_column_double(s, 1);
        cancel_req = sqlite3_column_int(s, 2);
        n.exp = sqlite3_column_int64(s, 3);
        n.worker = sqlite3_column_int64(s, 4);
        rc = ST_OK;
    } else if (step_rc == SQLITE_DONE) {
        rc = ST_NOTFOUND;
    }
    db_reader_put(st, c);
    if (rc != ST_OK)
        return rc;
    if (!active)
        return ST_CONFLICT;
    if (!member)
        return ST_INVALID;
    double noted = beats_expiry(&st->beats, run, rank);
    if ((noted > expires ? noted : expires) < now)
        return ST_CONFLICT; /* lapsed, not yet reaped: not to be revived */
    if (cancel_req)
        return heartbeat_cancelled(st, run, rank, step, lease_s, cancel);
    return beats_note(&st->beats, &n) == 0 ? ST_OK : ST_ERROR;
}

/* What the server holds of an experiment's points, for a finish "succeeded". */
static int points_held(struct conn *c, int64_t exp, struct points_held *h)
{
    sqlite3_stmt *s = db_stmt(c, q_points_held);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, exp);
    if (sqlite3_step(s) != SQLITE_ROW) {
        db_log_sql(c, sqlite3_sql(s));
        return ST_ERROR;
    }
    h->final_step = (long)sqlite3_column_int64(s, 0);
    h->final_loss = sqlite3_column_int(s, 1) > 0;
    h->points = (long)sqlite3_column_int64(s, 2);
    return ST_OK;
}

static int finish(struct store *st, const struct finish *f, struct points_held *held,
                  int64_t *worker)
{
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int64_t run = f->run;
    const char *outcome = f->outcome, *reason = f->reason;
    long points = f->points;
    int rc = db_run_row(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    int release = !strcmp(outcome, "released");
    int retry = !strcmp(outcome, "failed") && (f->retry || f->rank > 0);
    if (!r.active) {
        /* A retried finish of the same outcome is answered as the first was;
         * so is a rank's finish after the gang's end. */
        int same = !strcmp(r.run_state, "ended") &&
                   (release || retry || f->rank > 0 || !strcmp(r.exp_state, outcome));
        return same ? ST_OK : ST_CONFLICT; /* answered once what it read is durable */
    }
    int64_t member;
    if ((rc = db_member_worker(c, run, f->rank, &member)) != ST_OK)
        return rc == ST_NOTFOUND ? ST_INVALID : rc;
    if (db_touch_worker(c, member, now) != 0)
        return ST_ERROR;
    *worker = member;
    if (retry) {
        /* a rank's failure, or a failure of the machinery rather than of
         * the experiment: the run ends for every rank, the experiment goes
         * back to the queue with an attempt spent */
        char why[600];
        snprintf(why, sizeof why, "rank %d of %d failed on attempt %d of %d: %s", f->rank, r.world,
                 r.attempts + 1, r.max_attempts, reason ? reason : "no reason given");
        return db_requeue(c, run, r.exp, r.attempts, r.max_attempts, r.cancel_req, why,
                                     now)
                              ? ST_ERROR
                              : ST_OK;
    }
    /* a rank of a gang speaks for itself only when it stops (released);
     * what became of the experiment is rank 0's to say */
    if (f->rank > 0 && !release)
        return ST_OK;
    if (!strcmp(outcome, "succeeded")) {
        /* Succeeded means every point is here: at least the final step's
         * loss, and as many points as the worker's files hold. */
        if (points_held(c, r.exp, held) != ST_OK)
            return ST_ERROR;
        if (!held->final_loss || held->points < points)
            return ST_INCOMPLETE;
    }
    if (!release)
        return end_experiment(c, run, r.exp, outcome, reason, now) ? ST_ERROR : ST_OK;
    /* Given back (the worker is stopping): queued again without spending an
     * attempt, since nothing failed; a cancel asked meanwhile wins. */
    char why[200];
    snprintf(why, sizeof why, "released by worker %lld%s%s", (long long)r.worker,
             reason ? ": " : "", reason ? reason : "");
    sqlite3_stmt *s = db_stmt(c, q_end_run);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_release)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, r.exp);
    sqlite3_bind_text(s, 2, why, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, now);
    return db_exec(c, s) == 0 ? ST_OK : ST_ERROR;
}

struct finish_job {
    const struct finish *f;
    struct points_held *held;
    int64_t *worker;
};

static int finish_job(struct store *st, void *arg)
{
    struct finish_job *j = arg;
    return finish(st, j->f, j->held, j->worker);
}

int store_finish(struct store *st, const struct finish *f, struct points_held *held,
                 int64_t *worker)
{
    *worker = 0;
    struct finish_job j = {f, held, worker};
    return db_run(st, finish_job, &j);
}

static int reap(struct store *st, double rendezvous_s, int *expired)
{
    struct conn *c = &st->writer;
    double now = store_now();
    struct lapsed {
        int64_t run, exp, worker;
        int attempts, max_attempts, cancel_req, world;
    } *l = NULL;
    int n = 0, cap = 0, rc;
    sqlite3_stmt *s = db_stmt(c, q_lapsed);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_double(s, 1, now);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            void *p = realloc(l, (size_t)cap * sizeof *l);
            if (!p) {
                free(l);
                return ST_ERROR;
            }
            l = p;
        }
        l[n++] = (struct lapsed){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                 sqlite3_column_int64(s, 5), sqlite3_column_int(s, 2),
                                 sqlite3_column_int(s, 3), sqlite3_column_int(s, 4),
                                 sqlite3_column_int(s, 6)};
    }
    if (rc != SQLITE_DONE) {
        free(l);
        return ST_ERROR;
    }
    for (int i = 0; i < n; i++) {
        char reason[200], gang[64] = "";
        if (l[i].world > 1)
            snprintf(gang, sizeof gang, ", which ends the gang of %d", l[i].world);
        snprintf(reason, sizeof reason, "lease lapsed (worker %lld lost%s) on attempt %d of %d",
                 (long long)l[i].worker, gang, l[i].attempts + 1, l[i].max_attempts);
        if (db_requeue(c, l[i].run, l[i].exp, l[i].attempts, l[i].max_attempts, l[i].cancel_req,
                       reason, now) != 0)
            break;
        (*expired)++;
    }
    free(l);
    if (*expired != n)
        return ST_ERROR;
    int late = 0;
    if (db_reap_rendezvous(c, now, rendezvous_s, &late) != 0)
        return ST_ERROR;
    n += late;
    *expired = n;
    if (n) {
        if (!(s = db_stmt(c, q_bump_counter)))
            return ST_ERROR;
        sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, n);
        if (db_exec(c, s) != 0)
            return ST_ERROR;
    }
    return ST_OK;
}

struct reap_job {
    double rendezvous_s;
    int *expired;
};

static int reap_job(struct store *st, void *arg)
{
    struct reap_job *j = arg;
    return reap(st, j->rendezvous_s, j->expired);
}

int store_reap(struct store *st, double rendezvous_s, int *expired)
{
    *expired = 0;
    struct reap_job j = {rendezvous_s, expired};
    int rc = db_run(st, reap_job, &j);
    if (rc != ST_OK)
        *expired = 0;
    return rc;
}

static int grace(struct store *st, void *arg)
{
    struct conn *c = &st->writer;
    double until = store_now() + *(double *)arg;
    sqlite3_stmt *s = db_stmt(c, q_grace_members);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_double(s, 1, until);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_grace_runs)))
        return ST_ERROR;
    sqlite3_bind_double(s, 1, until);
    return db_exec(c, s) == 0 ? ST_OK : ST_ERROR;
}

int store_grace(struct store *st, double lease_s)
{
    return db_run(st, grace, &lease_s);
}
