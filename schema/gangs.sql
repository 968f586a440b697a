-- cod-server's database (docs/api.md). Migration 3: gangs.
-- Applied by schema/migrate.c when PRAGMA user_version is below 3.
-- A run is held by world_size workers at once, one per rank, each with its
-- own lease; the run's lease_expires is the earliest of its members', so a
-- lapsed rank ends the run for all. A lease long-poll marks its worker
-- waiting, which is what a gang is collected from; a gang's ranks meet
-- through the rendezvous id its rank 0 posts.
ALTER TABLE workers ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN waiting_until REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
ALTER TABLE runs ADD COLUMN rendezvous TEXT;         -- rank 0's communicator id (base64)
ALTER TABLE runs ADD COLUMN rendezvous_by REAL;      -- a gang not met by then is ended
CREATE TABLE run_members (
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    rank           INTEGER NOT NULL,
    worker_id      INTEGER NOT NULL REFERENCES workers(id),
    lease_expires  REAL NOT NULL,
    told           INTEGER NOT NULL DEFAULT 0,       -- the worker has had its lease answer
    PRIMARY KEY (run_id, rank)
);
CREATE INDEX run_members_worker ON run_members (worker_id);
INSERT INTO run_members (run_id, rank, worker_id, lease_expires, told)
    SELECT id, 0, worker_id, lease_expires, 1 FROM runs WHERE state = 'active';
