-- Federation, part 3: evidence across realms. The outbox takes two more kinds of change (an evidence record made
-- here, and its retraction); every evidence record received from another realm keeps its provenance (who sent it,
-- the origin's key and signed object, when it first arrived); and every retraction received keeps the origin's
-- signed `Undo`, also one that arrived before its record.
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_change_kind_check;
ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_change_kind_check CHECK (change_kind IN (
    'content_revised', 'content_deleted', 'space_created', 'evidence_recorded', 'evidence_retracted'
));

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
    origin_created_at TIMESTAMPTZ NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
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
    retracted_at TIMESTAMPTZ NOT NULL,
    received_at TIMESTAMPTZ NOT NULL
);
