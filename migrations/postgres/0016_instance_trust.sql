-- Instance trust (trust model §2.10, §2.15): an admin's pin of a peer's trust, and the effective trust of every peer
-- as the last batch computed it. The batch's number is the instance setting `instance_trust_epoch`; every row of the
-- table carries it, and the table is replaced whole by each batch.
CREATE TABLE peer_trust_pins (
    peer_realm TEXT PRIMARY KEY REFERENCES peers (realm) ON DELETE CASCADE,
    pinned_trust DOUBLE PRECISION NOT NULL CHECK (pinned_trust >= 0 AND pinned_trust <= 1),
    pinned_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE instance_trust (
    peer_realm TEXT PRIMARY KEY,
    trust DOUBLE PRECISION NOT NULL,
    reason TEXT NOT NULL,
    agreements BIGINT NOT NULL,
    disagreements BIGINT NOT NULL,
    epoch BIGINT NOT NULL,
    computed_at TIMESTAMPTZ NOT NULL
);
