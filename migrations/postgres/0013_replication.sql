-- Federation, part 2: replication. The outbox (changes that leave the instance, in commit order), each peer's
-- replication state (the push cursor into our outbox with its backoff, the pull cursor into theirs with its
-- backfill), tombstones of deleted content, and what replicated rows keep of their origin (the signed object as
-- received, the key that signed it, when it arrived).

-- The outbox: one row per change that federates, written in the transaction of the change. `seq` is the position a
-- peer's cursor follows. It is taken from `outbox_seq` while the transaction holds a transaction-scoped advisory lock
-- that it keeps until its commit (see store/outbox.rs), so sequence numbers are issued in commit order: a reader that
-- has seen `seq` has seen every event committed before it, and no event with a lower number can commit later.
CREATE SEQUENCE outbox_seq;
CREATE TABLE outbox_events (
    seq BIGINT PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    change_kind TEXT NOT NULL CHECK (change_kind IN ('content_revised', 'content_deleted', 'space_created')),
    object_id TEXT NOT NULL,
    space_id TEXT NOT NULL,
    change TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX outbox_events_object ON outbox_events (object_id, seq);

-- Each peer's replication: push (our outbox to its inbox: the cursor below which everything was delivered or
-- dead-lettered, consecutive failures, the next attempt, a lease so that one process at a time delivers to a peer)
-- and pull (its outbox into our inbox: the cursor, the snapshot position while a backfill runs, the next pull).
CREATE TABLE peer_replication (
    peer_realm TEXT PRIMARY KEY,
    push_cursor BIGINT NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    leased_until TIMESTAMPTZ,
    failing_since TIMESTAMPTZ,
    last_success_at TIMESTAMPTZ,
    last_error_class TEXT,
    last_error TEXT,
    last_error_at TIMESTAMPTZ,
    auth_refreshed_at TIMESTAMPTZ,
    pulled_through BIGINT,
    pull_cursor BIGINT,
    backfill_after TEXT,
    backfill_head BIGINT,
    next_pull_at TIMESTAMPTZ NOT NULL,
    pull_leased_until TIMESTAMPTZ,
    last_pull_at TIMESTAMPTZ,
    last_pull_error TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- A dead letter (a delivery a peer refused for good) remembers the outbox event it carried.
ALTER TABLE federation_deliveries ADD COLUMN outbox_seq BIGINT;
CREATE INDEX federation_deliveries_dead ON federation_deliveries (state, peer_realm, created_at);

-- Deleted content: the tombstone every peer keeps (also for an item it never received, so a late Create cannot bring
-- it back). `deleted_by` is the actor (or, for a remote deletion, the origin's actor URL) that deleted it.
CREATE TABLE content_tombstones (
    content_id TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    deleted_at TIMESTAMPTZ NOT NULL,
    deleted_by TEXT NOT NULL,
    reason TEXT NOT NULL,
    signed_object TEXT,
    received_at TIMESTAMPTZ NOT NULL
);
ALTER TABLE content_items ADD COLUMN deleted_at TIMESTAMPTZ;

-- Replicated rows: when they arrived here (local rows: when they were made), and for a revision or space the object
-- exactly as its origin signed it, with the key that signed it, so it stays attributable after relay.
ALTER TABLE content_items ADD COLUMN received_at TIMESTAMPTZ;
UPDATE content_items SET received_at = created_at;
ALTER TABLE content_items ALTER COLUMN received_at SET NOT NULL;
ALTER TABLE content_revisions ADD COLUMN signed_object TEXT;
ALTER TABLE content_revisions ADD COLUMN proof_key_id TEXT;
ALTER TABLE content_revisions ADD COLUMN received_at TIMESTAMPTZ;
UPDATE content_revisions SET received_at = created_at;
ALTER TABLE content_revisions ALTER COLUMN received_at SET NOT NULL;
ALTER TABLE spaces ADD COLUMN signed_object TEXT;
ALTER TABLE spaces ADD COLUMN received_at TIMESTAMPTZ;
UPDATE spaces SET received_at = created_at;
ALTER TABLE spaces ALTER COLUMN received_at SET NOT NULL;

-- Evidence keeps the result of verifying its origin's proof (local records are this instance's own: verified).
ALTER TABLE usage_events ADD COLUMN origin_proof_verified BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE reviews ADD COLUMN origin_proof_verified BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE ratings ADD COLUMN origin_proof_verified BOOLEAN NOT NULL DEFAULT TRUE;
