-- Sign-ins to the web console (`/console/`): an admin-scope API key exchanged for a session that a cookie names. As
-- with API keys, only the SHA-256 of the cookie's token is kept, so a copy of the database opens no session. A
-- session ends at sign-out (`ended_at`), after sitting idle (`last_seen_at`), at `expires_at`, or as soon as its key
-- is revoked, expires or loses the admin scope (checked on every request). Archives leave it out: a restored realm
-- asks its admins to sign in again.
CREATE TABLE console_sessions (
    id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    key_id TEXT NOT NULL REFERENCES api_keys (id),
    created_at TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
