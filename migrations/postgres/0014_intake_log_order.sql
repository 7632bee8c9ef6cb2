-- The intake log is read newest first, of one peer or of every peer, ordered by (created_at, id): both reads
-- are served from an index in that order instead of a scan and a sort that grow with the log.
DROP INDEX federation_intake_peer;
CREATE INDEX federation_intake_peer ON federation_intake (peer_realm, created_at, id);
CREATE INDEX federation_intake_time ON federation_intake (created_at, id);
