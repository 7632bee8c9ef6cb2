-- Federation, part 1: the instance's signing keys, its peers and their pinned keys, the inbox (nonces seen, activities
-- received and queued), the queue of peering activities to deliver, and the intake log of what peers' activities did.

-- The instance's Ed25519 keys. The private key is stored only encrypted (XChaCha20-Poly1305 under the key-encryption
-- key of the configuration, never in the database), so several processes on one database sign with the same key and
-- a copy of the database alone signs nothing. A rotated key is endorsed by the key before it.
CREATE TABLE instance_keys (
    key_id TEXT PRIMARY KEY,
    public_key_multibase TEXT NOT NULL UNIQUE,
    encrypted_private_key TEXT NOT NULL,
    valid_from TIMESTAMPTZ NOT NULL,
    valid_until TIMESTAMPTZ,
    endorsed_by_key_id TEXT,
    endorsement TEXT,
    created_at TIMESTAMPTZ NOT NULL
);

-- Peers: other realms this instance knows, by their realm (host and port). state is pending_out (we asked),
-- pending_in (they asked), active, blocked, unreachable or rejected; level the admin's base trust in them.
CREATE TABLE peers (
    realm TEXT PRIMARY KEY,
    base_url TEXT NOT NULL,
    actor_url TEXT NOT NULL,
    inbox_url TEXT NOT NULL,
    outbox_url TEXT,
    state TEXT NOT NULL CHECK (state IN ('pending_out', 'pending_in', 'active', 'blocked', 'unreachable', 'rejected')),
    level TEXT NOT NULL CHECK (level IN ('quarantine', 'low', 'standard', 'high')),
    our_follow_id TEXT,
    their_follow_id TEXT,
    blocked_reason TEXT,
    blocked_until TIMESTAMPTZ,
    state_before_block TEXT,
    last_contact_at TIMESTAMPTZ,
    last_error TEXT,
    last_error_at TIMESTAMPTZ,
    manifest_refreshed_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- Keys pinned for a peer: by an admin at peering (pinned_by 'admin'), on first contact awaiting an admin's approval
-- ('first_contact'), or through an endorsement by a key already pinned (the endorsing key's ID).
CREATE TABLE peer_keys (
    key_id TEXT PRIMARY KEY,
    peer_realm TEXT NOT NULL REFERENCES peers (realm) ON DELETE CASCADE,
    public_key_multibase TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    valid_from TIMESTAMPTZ,
    valid_until TIMESTAMPTZ,
    pinned_by TEXT NOT NULL,
    pinned_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX peer_keys_peer ON peer_keys (peer_realm);

-- Signature nonces seen in the acceptance window, shared by every process on the database, so a replay is refused
-- whichever process it reaches.
CREATE TABLE inbox_nonces (
    peer_realm TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (peer_realm, nonce)
);
CREATE INDEX inbox_nonces_expiry ON inbox_nonces (expires_at);

-- Activities accepted by the inbox: the verified bytes, queued until a worker applies them. The activity ID is the
-- dedupe key (kept for the retention horizon after receipt).
CREATE TABLE inbox_activities (
    activity_id TEXT PRIMARY KEY,
    peer_realm TEXT NOT NULL,
    activity_type TEXT NOT NULL,
    key_id TEXT NOT NULL,
    body TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'applied', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    leased_until TIMESTAMPTZ,
    processed_at TIMESTAMPTZ,
    outcome TEXT
);
CREATE INDEX inbox_activities_queue ON inbox_activities (state, next_attempt_at, received_at);
CREATE INDEX inbox_activities_received ON inbox_activities (received_at);

-- Peering activities (Follow, Accept, Reject, Undo, Update of the instance actor) waiting to be delivered to one
-- peer, in order. The body is the transport-neutral message; each attempt renders and signs it afresh. A worker that
-- takes a row leases it (leased_until), so no other worker or process sends it meanwhile, and a crashed worker's
-- rows come back when the lease ends.
CREATE TABLE federation_deliveries (
    id TEXT PRIMARY KEY,
    peer_realm TEXT NOT NULL,
    inbox_url TEXT NOT NULL,
    activity_id TEXT NOT NULL,
    activity_type TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    leased_until TIMESTAMPTZ,
    last_error TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);
CREATE INDEX federation_deliveries_queue ON federation_deliveries (state, next_attempt_at, created_at);

-- The intake log: what each peer's activity did here (the federation counterpart of mcp_calls), so a peer's
-- traffic is accounted to the peer.
CREATE TABLE federation_intake (
    id TEXT PRIMARY KEY,
    peer_realm TEXT NOT NULL,
    activity_id TEXT NOT NULL,
    activity_type TEXT NOT NULL,
    key_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX federation_intake_peer ON federation_intake (peer_realm, created_at);
