-- Agreement events (trust model §2.10, §2.15): the first time a target's first-party-only status is decided
-- (supported or high_confidence: positive; incorrect: negative), frozen afterwards; and at that moment, one event
-- per peer whose evidence on the target, received strictly before, had a stance. Instance trust batches count them.
CREATE TABLE first_party_decisions (
    target_id TEXT PRIMARY KEY,
    decision TEXT NOT NULL CHECK (decision IN ('positive', 'negative')),
    decided_at TEXT NOT NULL
);

CREATE TABLE agreement_events (
    peer_realm TEXT NOT NULL,
    target_id TEXT NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('positive', 'negative')),
    decided_at TEXT NOT NULL,
    stance TEXT NOT NULL CHECK (stance IN ('positive', 'negative')),
    stance_received_at TEXT NOT NULL,
    PRIMARY KEY (peer_realm, target_id)
);
