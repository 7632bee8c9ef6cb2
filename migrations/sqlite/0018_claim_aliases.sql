-- Claims across realms (trust model §2.15, "Claims with the same text"): the first claim held under a fingerprint is
-- canonical; a claim of another realm with the same normalized text is an alias of it. The alias keeps the other
-- realm's ID, so that its evidence and its `get` resolve to the canonical claim.
CREATE TABLE claim_aliases (
    alias_id TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    canonical_claim_id TEXT NOT NULL REFERENCES claims (id),
    created_at TEXT NOT NULL
);
CREATE INDEX claim_aliases_canonical ON claim_aliases (canonical_claim_id);
