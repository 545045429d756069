-- Replies being written ("runs") and the events each one streamed, so that any server
-- process sharing the database can replay a reply to a browser that lost it, follow it
-- live, and stop it. See src/runs.rs.
--
-- Portable SQL (SQLite and PostgreSQL); timestamps are RFC 3339 UTC text
-- 'YYYY-MM-DDTHH:MM:SS.mmmZ', which order as text.

CREATE TABLE IF NOT EXISTS runs (
    run_id          TEXT PRIMARY KEY NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('running', 'done')),
    -- The process writing it (a random name per process start).
    node            TEXT NOT NULL,
    -- Set by another process's stop request; the writing process reads it and stops.
    stop_requested  INTEGER NOT NULL DEFAULT 0,
    started_at      TEXT NOT NULL,
    -- The heartbeat: refreshed at least every few seconds while running. A run whose
    -- heartbeat is older than 15 s is treated as over (its process died).
    updated_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_conversation ON runs (conversation_id, status);
CREATE INDEX IF NOT EXISTS runs_owner ON runs (owner_id, status);
CREATE INDEX IF NOT EXISTS runs_updated ON runs (updated_at);

-- Every event of a run, numbered from 1 in the order it was streamed, as the JSON chunk
-- the browser receives. Written in batches; deleted some minutes after the run ends.
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    event  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- How many events of its latest run a stored message holds: a browser that reloads while
-- the reply is being written asks the run for the events after that many, so nothing is
-- applied twice (the reducer appends text) and nothing is missed.
ALTER TABLE messages ADD COLUMN run_seq INTEGER NOT NULL DEFAULT 0;
