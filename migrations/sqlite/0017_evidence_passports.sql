-- Federation, part 3: evidence across realms (types as in 0001: TEXT for timestamps). The outbox takes two more kinds
-- of change (an evidence record made here, and its retraction); every evidence record received from another realm
-- keeps its provenance (who sent it, the origin's key and signed object, when it first arrived); and every
-- retraction received keeps the origin's signed `Undo`, also one that arrived before its record.

-- SQLite cannot change a CHECK constraint in place: the outbox is copied into a table with the new one. Its
-- AUTOINCREMENT high-water mark is carried over, so that a position is never issued twice, even when the newest
-- events had been purged.
CREATE TABLE outbox_events_with_evidence (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    change_kind TEXT NOT NULL CHECK (change_kind IN (
        'content_revised', 'content_deleted', 'space_created', 'evidence_recorded', 'evidence_retracted'
    )),
    object_id TEXT NOT NULL,
    space_id TEXT NOT NULL,
    change TEXT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO outbox_events_with_evidence (seq, event_id, change_kind, object_id, space_id, change, created_at)
    SELECT seq, event_id, change_kind, object_id, space_id, change, created_at FROM outbox_events;
DELETE FROM sqlite_sequence WHERE name = 'outbox_events_with_evidence';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'outbox_events_with_evidence', seq FROM sqlite_sequence WHERE name = 'outbox_events';
DROP TABLE outbox_events;
ALTER TABLE outbox_events_with_evidence RENAME TO outbox_events;
CREATE INDEX outbox_events_object ON outbox_events (object_id, seq);

-- An evidence record received from another realm: the row itself lives with local records (usage_events, reviews,
-- ratings, with `origin` set to its realm and its `created_at` the time decay runs from: the earlier of the origin's
-- date and `received_at`); this is where it came from and the proof that it is the origin's.
CREATE TABLE evidence_provenance (
    record_id TEXT PRIMARY KEY,
    record_kind TEXT NOT NULL CHECK (record_kind IN ('usage', 'review', 'rating')),
    origin TEXT NOT NULL,
    sender TEXT NOT NULL,
    proof_key_id TEXT NOT NULL,
    signed_object TEXT NOT NULL,
    origin_created_at TEXT NOT NULL,
    received_at TEXT NOT NULL,
    target_id TEXT NOT NULL
);
CREATE INDEX evidence_provenance_origin ON evidence_provenance (origin, target_id);
CREATE INDEX evidence_provenance_target ON evidence_provenance (target_id);

-- A retraction received from a record's origin, with the origin's signed object. Kept also when it arrives before
-- its record (relays and pulls can reorder), so that the record, when it comes, is stored already retracted.
CREATE TABLE evidence_retractions (
    record_id TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    proof_key_id TEXT NOT NULL,
    signed_object TEXT NOT NULL,
    retracted_at TEXT NOT NULL,
    received_at TEXT NOT NULL
);
