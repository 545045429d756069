-- The restaurant catalogue (seeded by 0003), bookings, calls waiting for approval and
-- server settings.
CREATE TABLE IF NOT EXISTS restaurants (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    -- Canonical Vietnamese city name: 'Hà Nội', 'TP. Hồ Chí Minh', 'Đà Lạt', 'Đà Nẵng', 'Huế'.
    city           TEXT NOT NULL,
    address        TEXT NOT NULL,
    cuisine        TEXT NOT NULL,
    -- Lower-case, accent-free words of name and cuisine, for matching what people type.
    search_text    TEXT NOT NULL,
    price_level    INTEGER NOT NULL CHECK (price_level BETWEEN 1 AND 4),
    -- Local opening hours 'HH:MM'; the last seating is one hour before closing.
    opens_at       TEXT NOT NULL,
    closes_at      TEXT NOT NULL,
    utc_offset     TEXT NOT NULL DEFAULT '+07:00',
    -- Seats that can be booked for one start time.
    seats_per_slot INTEGER NOT NULL CHECK (seats_per_slot > 0)
);
CREATE INDEX IF NOT EXISTS restaurants_city ON restaurants (city);

CREATE TABLE IF NOT EXISTS bookings (
    id              TEXT PRIMARY KEY NOT NULL,
    owner_id        TEXT NOT NULL,
    conversation_id TEXT,
    -- The approved tool call's id, unique within its conversation: the idempotency key. A
    -- replay finds this row instead of creating a second booking.
    tool_call_id    TEXT NOT NULL,
    restaurant_id   TEXT NOT NULL REFERENCES restaurants (id),
    party_size      INTEGER NOT NULL CHECK (party_size BETWEEN 1 AND 20),
    -- RFC 3339 with the restaurant's offset, as booked.
    starts_at       TEXT NOT NULL,
    -- The same instant in UTC ('YYYY-MM-DDTHH:MM:SSZ'), for capacity per slot.
    starts_at_utc   TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('confirmed', 'waitlisted', 'cancelled')),
    created_at      TEXT NOT NULL,
    UNIQUE (conversation_id, tool_call_id)
);
CREATE INDEX IF NOT EXISTS bookings_slot ON bookings (restaurant_id, starts_at_utc, status);
CREATE INDEX IF NOT EXISTS bookings_owner ON bookings (owner_id, created_at);

CREATE TABLE IF NOT EXISTS pending_calls (
    tool_call_id    TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    tool_name       TEXT NOT NULL,
    -- The validated input, JSON.
    input           TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (conversation_id, tool_call_id)
);
CREATE INDEX IF NOT EXISTS pending_calls_message ON pending_calls (message_id);

CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
