-- cod-server's database (docs/api.md). Migration 2: worker states.
-- Applied by schema/migrate.c when PRAGMA user_version is below 2.
-- A worker that stops cleanly says so (offline); an operator may remove a
-- worker that is gone: it is never listed again, while the runs it made
-- keep referring to it.
ALTER TABLE workers ADD COLUMN stopped REAL;   -- when it said it stopped; NULL while it runs
ALTER TABLE workers ADD COLUMN removed REAL;   -- when an operator removed it
