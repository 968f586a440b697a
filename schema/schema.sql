-- cod-server's database (docs/api.md). Migration 1: the whole schema.
-- Applied by schema/migrate.c when PRAGMA user_version is below 1.
CREATE TABLE sweeps (
    id          INTEGER PRIMARY KEY,
    created     REAL NOT NULL,
    idem_key    TEXT UNIQUE,
    body        TEXT NOT NULL            -- the request: base spec and grid
);

CREATE TABLE workers (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    device      TEXT NOT NULL,           -- "cpu" or "cuda"
    capacity    INTEGER NOT NULL,        -- GPUs (cuda) or concurrent runs (cpu)
    registered  REAL NOT NULL,
    last_seen   REAL NOT NULL
);

CREATE TABLE experiments (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    model         TEXT NOT NULL,
    norm          TEXT NOT NULL,
    device        TEXT NOT NULL,         -- "cpu", "cuda" or "any"
    gpus          INTEGER NOT NULL,
    priority      INTEGER NOT NULL,
    max_attempts  INTEGER NOT NULL,
    steps         INTEGER NOT NULL,
    spec          TEXT NOT NULL,         -- complete spec, every default explicit
    state         TEXT NOT NULL CHECK (state IN
                  ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    attempts      INTEGER NOT NULL DEFAULT 0,   -- lapsed leases so far
    cancel_req    INTEGER NOT NULL DEFAULT 0,
    reason        TEXT,
    sweep_id      INTEGER REFERENCES sweeps(id),
    sweep_cell    TEXT,                  -- JSON object: this cell's grid values
    idem_key      TEXT UNIQUE,
    run_id        INTEGER,               -- the run holding the lease, when running
    step          INTEGER NOT NULL DEFAULT 0,
    created       REAL NOT NULL,
    started       REAL,
    finished      REAL
);
CREATE INDEX experiments_queue ON experiments (state, priority DESC, id);
CREATE INDEX experiments_sweep ON experiments (sweep_id);

CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
    worker_id      INTEGER NOT NULL REFERENCES workers(id),
    state          TEXT NOT NULL CHECK (state IN ('active', 'lost', 'ended')),
    started        REAL NOT NULL,
    lease_expires  REAL NOT NULL
);
CREATE INDEX runs_active ON runs (state, lease_expires);

-- layer is -1 for scalars; the key makes a retried batch rewrite, not add.
CREATE TABLE metrics (
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
    name           TEXT NOT NULL,
    step           INTEGER NOT NULL,
    layer          INTEGER NOT NULL,
    value          REAL,                 -- NULL: non-finite (travelled as JSON null)
    PRIMARY KEY (experiment_id, name, step, layer)
) WITHOUT ROWID;

-- Newest value of each scalar, kept on ingestion so that show and /metrics
-- never scan a long series.
CREATE TABLE latest (
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
    name           TEXT NOT NULL,
    step           INTEGER NOT NULL,
    value          REAL,
    PRIMARY KEY (experiment_id, name)
) WITHOUT ROWID;

CREATE TABLE logs (
    id             INTEGER PRIMARY KEY,
    experiment_id  INTEGER NOT NULL REFERENCES experiments(id),
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    seq            INTEGER NOT NULL,
    ts             REAL NOT NULL,
    line           TEXT NOT NULL,
    UNIQUE (run_id, seq)
);
CREATE INDEX logs_experiment ON logs (experiment_id, id);

-- Monotonic counters that must survive restarts (lease expiries).
CREATE TABLE counters (
    name   TEXT PRIMARY KEY,
    value  INTEGER NOT NULL
);
INSERT INTO counters VALUES ('lease_expiries', 0);
