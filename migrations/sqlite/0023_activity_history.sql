-- The minute-by-minute history the web console plots, kept for a week (the activity-history loop deletes older
-- rows). Both tables are written once a minute by that loop, never on a request's path.

-- Audited calls per minute (MCP tools, resources and console actions): all of them, the successful writes among
-- them, and those answered with an error code. Each serving process counts its calls in memory and adds them to
-- the minute's row once a minute, so every process serving one database adds to the same rows and no call waits
-- on a shared row.
CREATE TABLE call_minutes (
    minute_start TEXT PRIMARY KEY,
    calls INTEGER NOT NULL,
    writes INTEGER NOT NULL,
    errors INTEGER NOT NULL
);

-- Each peer's replication as sampled once a minute: events waiting for it, how long the oldest has waited, and its
-- dead letters. A peer's samples go with the peer.
CREATE TABLE peer_lag_samples (
    peer_realm TEXT NOT NULL REFERENCES peers (realm) ON DELETE CASCADE,
    minute_start TEXT NOT NULL,
    undelivered_events INTEGER NOT NULL,
    oldest_waiting_seconds INTEGER NOT NULL,
    dead_letters INTEGER NOT NULL,
    PRIMARY KEY (peer_realm, minute_start)
);
CREATE INDEX peer_lag_samples_minute ON peer_lag_samples (minute_start);
