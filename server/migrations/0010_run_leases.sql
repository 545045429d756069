-- One run per conversation across every process sharing the database: the "running" row
-- of a conversation is its lease. It is taken by inserting it (a second insert for the
-- same conversation fails on the index below), renewed by the run's heartbeat, and once
-- its heartbeat is older than the stale limit any process may close it as interrupted.
-- See src/runs.rs and src/runs/lease.rs.

-- Set when a run was closed by another process because its own stopped beating (it
-- crashed, or was shut down before it could finish): its reply is marked interrupted.
ALTER TABLE runs ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0;

-- Older servers could leave two running rows in one conversation (the check was per
-- process): all but the newest are closed, so the index below can be built.
UPDATE runs SET status = 'done', interrupted = 1
WHERE status = 'running' AND EXISTS (
    SELECT 1 FROM runs AS newer
    WHERE newer.conversation_id = runs.conversation_id AND newer.status = 'running'
      AND (newer.started_at > runs.started_at
           OR (newer.started_at = runs.started_at AND newer.run_id > runs.run_id))
);

CREATE UNIQUE INDEX IF NOT EXISTS runs_one_running ON runs (conversation_id)
WHERE status = 'running';
