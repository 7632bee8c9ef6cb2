-- Foundation: the instance's own settings, actors, API keys and the MCP audit log.
-- Types: TEXT for IDs, timestamps (RFC 3339, UTC) and JSON; INTEGER 0/1 for booleans.

CREATE TABLE instance_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Actors of this realm and, later, replicated actors of peer realms (origin says which).
CREATE TABLE actors (
    id TEXT PRIMARY KEY,
    actor_type TEXT NOT NULL CHECK (actor_type IN ('usr', 'org', 'ai')),
    display_name TEXT NOT NULL,
    controller_id TEXT REFERENCES actors (id),
    root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    verified_by_email INTEGER NOT NULL DEFAULT 0,
    verified_by_domain INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX actors_root_controller ON actors (root_controller_id);
CREATE INDEX actors_created ON actors (created_at, id);

-- Only the SHA-256 of a key's secret is stored; the secret is shown once at creation.
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    actor_id TEXT NOT NULL REFERENCES actors (id),
    secret_sha256 TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT,
    last_used_at TEXT
);
CREATE INDEX api_keys_actor ON api_keys (actor_id, created_at);

-- Every MCP call, successful or not. Successful writes are also the source of truth for rate limits.
CREATE TABLE mcp_calls (
    id TEXT PRIMARY KEY,
    actor_id TEXT NOT NULL,
    root_controller_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    is_write INTEGER NOT NULL,
    request TEXT NOT NULL,
    outcome TEXT NOT NULL,
    result_summary TEXT NOT NULL,
    duration_micros INTEGER NOT NULL,
    client_name TEXT,
    client_version TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX mcp_calls_write_window ON mcp_calls (root_controller_id, created_at) WHERE is_write AND outcome = 'ok';
CREATE INDEX mcp_calls_actor ON mcp_calls (actor_id, created_at);
