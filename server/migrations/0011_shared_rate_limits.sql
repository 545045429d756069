-- The per-owner message limit shared by every replica on PostgreSQL (on SQLite, one
-- process, the limit stays in memory). One row per owner: the "theoretical arrival time"
-- of the generic cell rate algorithm, in milliseconds since 1970. A request is allowed
-- when moving it one period on stays within the burst; one conditional upsert decides,
-- so replicas never let more through together than one would alone. See
-- src/security.rs (`SharedLimit`).
CREATE TABLE IF NOT EXISTS rate_allowances (
    owner_id TEXT PRIMARY KEY NOT NULL,
    tat      BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_allowances_tat ON rate_allowances (tat);
