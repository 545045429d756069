-- The questions asked of `runs` by status, answered from indexes as small as the rows they
-- are about. `runs_owner` (owner_id, status) and `runs_updated` (updated_at) held every
-- run kept for the last ten minutes, so the count of another process's running replies
-- (read every 100 ms while replies start) and the search for dead runs (every sweep)
-- walked hundreds of thousands of finished runs on a busy server, and every heartbeat
-- moved a run within an index of them all.
DROP INDEX IF EXISTS runs_owner;
DROP INDEX IF EXISTS runs_updated;

-- Running replies only: whose (the limit per person across processes), where (stop
-- requests to a process) and their heartbeat (dead runs), read from the index alone.
CREATE INDEX IF NOT EXISTS runs_running ON runs (updated_at, owner_id, node)
WHERE status = 'running';

-- Finished runs by their last write, for the purge of those over ten minutes old.
CREATE INDEX IF NOT EXISTS runs_done ON runs (updated_at)
WHERE status = 'done';
