-- cod-server's database (docs/api.md). Migration 5: the gangs that owe a
-- rendezvous are found without reading every active run.
-- Applied by schema/migrate.c when PRAGMA user_version is below 5.
-- The reaper looks for them every second, under the writer's lock. Through
-- runs_active it read every active run to keep the few gangs not yet met:
-- 1.4 ms at 10,000 running experiments, during which no write could
-- proceed. The partial index holds only those gangs, so the look costs
-- 0.017 ms there, and nothing when there are none.
CREATE INDEX runs_rendezvous_due ON runs (rendezvous_by)
    WHERE state = 'active' AND world_size > 1 AND rendezvous IS NULL;
