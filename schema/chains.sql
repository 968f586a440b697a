-- cod-server's database (docs/api.md). Migration 7: chains of experiments.
-- Applied by schema/migrate.c when PRAGMA user_version is below 7.
-- An experiment may wait for others (its spec's after, and the experiment
-- its init.from starts from): waiting until every one has succeeded, then
-- queued; blocked, saying why, once one of them fails, is cancelled or is
-- blocked itself. A sweep's later stages (a fine-tuning after each
-- pretraining) are experiments of the sweep with a stage above 0.
-- The state's CHECK gains 'waiting' and 'blocked', which SQLite can only do
-- by building the table again (migrate.c runs a migration with the foreign
-- keys off, and checks them before it commits). What is not rebuilt is
-- made only where it is missing, so that the migration runs again over a
-- database taken back to an older version (the tests do).
DROP TRIGGER IF EXISTS metrics_steps;  -- it names experiments, which is built again
CREATE TABLE experiments_chained (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    model         TEXT NOT NULL,
    norm          TEXT NOT NULL,
    device        TEXT NOT NULL,
    gpus          INTEGER NOT NULL,
    priority      INTEGER NOT NULL,
    max_attempts  INTEGER NOT NULL,
    steps         INTEGER NOT NULL,         -- 0 until the data gives train.epochs' steps
    spec          TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN
                  ('waiting', 'queued', 'running', 'succeeded', 'failed', 'cancelled',
                   'blocked')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    cancel_req    INTEGER NOT NULL DEFAULT 0,
    reason        TEXT,
    sweep_id      INTEGER REFERENCES sweeps(id),
    sweep_cell    TEXT,
    idem_key      TEXT UNIQUE,
    run_id        INTEGER,
    step          INTEGER NOT NULL DEFAULT 0,
    created       REAL NOT NULL,
    started       REAL,
    finished      REAL,
    stage         INTEGER NOT NULL DEFAULT 0  -- a sweep's: 0 the grid's cell, k its k-th later stage
);
INSERT INTO experiments_chained (id, name, model, norm, device, gpus, priority, max_attempts,
    steps, spec, state, attempts, cancel_req, reason, sweep_id, sweep_cell, idem_key, run_id,
    step, created, started, finished)
    SELECT id, name, model, norm, device, gpus, priority, max_attempts, steps, spec, state,
    attempts, cancel_req, reason, sweep_id, sweep_cell, idem_key, run_id, step, created,
    started, finished FROM experiments;
DROP TABLE experiments;
ALTER TABLE experiments_chained RENAME TO experiments;
CREATE INDEX experiments_queue ON experiments (state, priority DESC, id);
CREATE INDEX experiments_sweep ON experiments (sweep_id);

-- experiment_id waits for after_id
CREATE TABLE IF NOT EXISTS waits (
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
    after_id       INTEGER NOT NULL REFERENCES experiments(id),
    PRIMARY KEY (experiment_id, after_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS waits_after ON waits (after_id, experiment_id);

-- The last of an experiment's dependencies to succeed queues it.
CREATE TRIGGER IF NOT EXISTS waits_succeeded AFTER UPDATE OF state ON experiments
    WHEN NEW.state = 'succeeded' AND OLD.state <> 'succeeded'
BEGIN
    UPDATE experiments SET state = 'queued'
        WHERE state = 'waiting'
        AND id IN (SELECT experiment_id FROM waits WHERE after_id = NEW.id)
        AND NOT EXISTS (SELECT 1 FROM waits w JOIN experiments d ON d.id = w.after_id
                        WHERE w.experiment_id = experiments.id AND d.state <> 'succeeded');
END;

-- One that will never succeed blocks every experiment that waits on it,
-- directly or through others, naming it and its reason.
CREATE TRIGGER IF NOT EXISTS waits_blocked AFTER UPDATE OF state ON experiments
    WHEN NEW.state IN ('failed', 'cancelled', 'blocked') AND OLD.state <> NEW.state
BEGIN
    UPDATE experiments SET state = 'blocked', finished = NEW.finished,
        reason = 'waits for experiment ' || NEW.id || ' (' || NEW.name || '), which '
                 || CASE NEW.state WHEN 'blocked' THEN 'is blocked' ELSE NEW.state END
                 || coalesce(': ' || NEW.reason, '')
        WHERE state = 'waiting'
        AND id IN (WITH RECURSIVE down(x) AS (
                       SELECT experiment_id FROM waits WHERE after_id = NEW.id
                       UNION SELECT w.experiment_id FROM waits w JOIN down ON w.after_id = down.x)
                   SELECT x FROM down);
END;

-- A run of train.epochs learns its steps from its data: its first point
-- train/steps says them (the progress and the final step a finish needs).
CREATE TRIGGER IF NOT EXISTS metrics_steps AFTER INSERT ON metrics
    WHEN NEW.name = 'train/steps' AND NEW.layer = -1 AND NEW.value >= 1
BEGIN
    UPDATE experiments SET steps = CAST(NEW.value AS INTEGER) WHERE id = NEW.experiment_id;
END;
