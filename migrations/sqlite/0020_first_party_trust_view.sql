-- Search's first-party view (`trust_view: first_party`, an extension of the spec): what this organization's own
-- evidence says of each target, stored beside the assessment with every origin weighed, so that search filters and
-- sorts by it as it does by the other (trust model §2.15: the status this instance would give with no peers).
-- The counts are the first-party parties. A target that holds no other realm's evidence has the same values in both.
ALTER TABLE trust_summaries ADD COLUMN first_party_value REAL NOT NULL DEFAULT 0;
ALTER TABLE trust_summaries ADD COLUMN first_party_lower_bound REAL NOT NULL DEFAULT 0;
ALTER TABLE trust_summaries ADD COLUMN first_party_status TEXT NOT NULL DEFAULT 'unverified';
ALTER TABLE trust_summaries ADD COLUMN first_party_independent_confirmations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trust_summaries ADD COLUMN first_party_contradictions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trust_summaries ADD COLUMN first_party_real_world_confirmations INTEGER NOT NULL DEFAULT 0;
UPDATE trust_summaries SET first_party_value = value, first_party_lower_bound = lower_bound,
    first_party_status = status, first_party_independent_confirmations = independent_confirmations,
    first_party_contradictions = contradictions, first_party_real_world_confirmations = real_world_confirmations;

-- Targets that already hold another realm's evidence are assessed again by the next instance-trust batch, which
-- writes their first-party values (the engine computes them; SQL cannot): this setting asks it to.
INSERT INTO instance_settings (name, value, updated_at)
SELECT 'first_party_trust_backfill', 'pending', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE EXISTS (SELECT 1 FROM evidence_provenance);

-- Browsing by first-party trust walks this index as browsing by trust walks `trust_summaries_order` (migration 0010):
-- the expression is written exactly as the search statements write it (`FIRST_PARTY_STATUS_RANK` in
-- src/store/search.rs).
CREATE INDEX trust_summaries_first_party_order ON trust_summaries ((CASE first_party_status
    WHEN 'high_confidence' THEN 0 WHEN 'supported' THEN 1 WHEN 'unverified' THEN 2 WHEN 'disputed' THEN 3
    WHEN 'outdated' THEN 4 WHEN 'superseded' THEN 5 ELSE 6 END), first_party_lower_bound DESC);
