-- cod-server's database (docs/api.md). Migration 4: a member knows whether
-- its run is still active.
-- Applied by schema/migrate.c when PRAGMA user_version is below 4.
-- What a worker holds now (its free capacity at every lease, the gangs
-- it could join, GET /v1/workers) was found by joining every run the
-- worker ever held to runs: a cost that grew with the worker's history, by
-- hundreds of rows a lease on a busy worker. The flag, kept by the trigger
-- whenever a run leaves 'active' however it ends, lets those reads touch
-- only the runs held now, through a partial index.
ALTER TABLE run_members ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
UPDATE run_members SET active = 0
    WHERE run_id IN (SELECT id FROM runs WHERE state <> 'active');
DROP INDEX run_members_worker;
CREATE INDEX run_members_held ON run_members (worker_id, run_id) WHERE active = 1;
-- a gang's rank formed while its worker was parked, until it is told
CREATE INDEX run_members_untold ON run_members (worker_id, run_id) WHERE active = 1 AND told = 0;
CREATE TRIGGER run_members_ended AFTER UPDATE OF state ON runs
    WHEN OLD.state = 'active' AND NEW.state <> 'active'
BEGIN
    UPDATE run_members SET active = 0 WHERE run_id = NEW.id;
END;
