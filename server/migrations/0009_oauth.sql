-- OAuth 2.1 for the MCP endpoints: datban is the authorization server of its own MCP
-- servers (src/oauth/). Clients register themselves (RFC 7591), a person consents on our
-- page, and the client swaps a one-time code for an access and a refresh token.
--
-- Runs unchanged on SQLite and PostgreSQL: TEXT and INTEGER columns only, timestamps as
-- RFC 3339 UTC text 'YYYY-MM-DDTHH:MM:SS.mmmZ' (ordered as text). Secrets (codes, tokens,
-- client secrets) are never stored: only their SHA-256, as lower-case hex.

CREATE TABLE IF NOT EXISTS oauth_clients (
    -- 'dcl_' and 32 hex digits; public (it travels in URLs).
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL,
    -- JSON array of the registered redirect URIs; a request's must equal one of them.
    redirect_uris TEXT NOT NULL,
    -- Space-separated: authorization_code, and refresh_token when the client asked for it.
    grant_types   TEXT NOT NULL,
    auth_method   TEXT NOT NULL
        CHECK (auth_method IN ('none', 'client_secret_post')),
    secret_hash   TEXT,
    created_at    TEXT NOT NULL,
    CHECK ((auth_method = 'none') = (secret_hash IS NULL))
);

-- A checked /oauth/authorize request waiting for the person's answer on the consent page.
-- Taken (deleted) by that answer, so it is answered once.
CREATE TABLE IF NOT EXISTS oauth_requests (
    -- 'oar_' and 32 hex digits (122 random bits): it is in the consent page's URL.
    id             TEXT PRIMARY KEY NOT NULL,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri   TEXT NOT NULL,
    -- Space-separated, from 'bookings checkout'.
    scopes         TEXT NOT NULL,
    -- The MCP server the token will be for (RFC 8707), '<origin>/mcp/<assistant>'.
    resource       TEXT NOT NULL,
    -- PKCE S256: BASE64URL(SHA-256(code_verifier)).
    code_challenge TEXT NOT NULL,
    state          TEXT,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_requests_expiry ON oauth_requests (expires_at);

-- What a person allowed one client to do on one MCP server. Tokens belong to a grant;
-- revoking the grant ("Ngắt kết nối") ends all of them at once.
CREATE TABLE IF NOT EXISTS oauth_grants (
    -- 'grt_' and 32 hex digits.
    id           TEXT PRIMARY KEY NOT NULL,
    owner_id     TEXT NOT NULL,
    client_id    TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes       TEXT NOT NULL,
    resource     TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    -- When an access token of it was last accepted (updated at most once a minute).
    last_used_at TEXT,
    -- Set once: a revoked grant's tokens are refused even before they are deleted.
    revoked_at   TEXT
);
CREATE INDEX IF NOT EXISTS oauth_grants_owner ON oauth_grants (owner_id, created_at);

-- Authorization codes: single use, 60 s. A used code is kept until it expires (and a day
-- more) so that a second use is recognised and revokes the grant made from the first.
CREATE TABLE IF NOT EXISTS oauth_codes (
    code_hash      TEXT PRIMARY KEY NOT NULL,
    owner_id       TEXT NOT NULL,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri   TEXT NOT NULL,
    scopes         TEXT NOT NULL,
    resource       TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    expires_at     TEXT NOT NULL,
    used_at        TEXT,
    -- The grant the code's exchange made, to revoke when the code is replayed.
    grant_id       TEXT
);
CREATE INDEX IF NOT EXISTS oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE IF NOT EXISTS oauth_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    -- The token's own scopes: a refresh may narrow them.
    scopes     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    -- A refresh token that was exchanged. Presenting it again means it leaked: the whole
    -- grant is revoked.
    rotated_at TEXT
);
CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_id);
