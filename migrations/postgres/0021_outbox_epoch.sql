-- The outbox's epoch: a name for this instance's run of outbox positions. A restore from a backup starts a new one
-- (`interai admin restore`), because the restored outbox may give again positions that peers have already read; a
-- peer that sees a new epoch on a page reads the outbox again from its snapshot (docs/federation/replication.md,
-- "Epochs"). `peer_replication.outbox_epoch` is the epoch of each peer's outbox as last read here.
INSERT INTO instance_settings (name, value, updated_at)
VALUES ('outbox_epoch', replace(gen_random_uuid()::text, '-', ''), now())
ON CONFLICT (name) DO NOTHING;

ALTER TABLE peer_replication ADD COLUMN outbox_epoch TEXT;
