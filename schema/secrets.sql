-- cod-server's database (docs/api.md). Migration 8: the secrets that bind a
-- worker to its id and each rank of a run to its lease.
-- Applied by schema/migrate.c when PRAGMA user_version is below 8.
-- Registration gives a worker a secret, and a lease gives each rank one;
-- the worker's own calls and the run's calls must carry it. A worker
-- registered, or a rank leased, before this migration has none (NULL): its
-- calls need none, so that workers running through an upgrade keep
-- working, and a lease made for such a worker has none either. Everything
-- made since has one.
ALTER TABLE workers ADD COLUMN secret TEXT;
ALTER TABLE run_members ADD COLUMN secret TEXT;
