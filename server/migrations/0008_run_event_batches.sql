-- A run's events are stored as the batches the storer writes them in (every 100 ms and at
-- the end of the run), one row per batch, instead of one row per event: a reply is dozens
-- of events, and one row per event cost as many inserts and index updates per reply.
-- `events` holds the batch's events in order, one JSON text per line (serde's JSON never
-- contains a raw line break), numbered first_seq, first_seq + 1, … last_seq.
DROP TABLE IF EXISTS run_events;

CREATE TABLE IF NOT EXISTS run_event_batches (
    run_id    TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    first_seq INTEGER NOT NULL,
    last_seq  INTEGER NOT NULL,
    events    TEXT NOT NULL,
    PRIMARY KEY (run_id, first_seq)
);
