-- Knowledge (spaces, entities, sources, content with immutable revisions, claims, relations) and
-- evidence (usage events, reviews, ratings), idempotency records, and persisted trust.
-- Every replicable row carries `origin`, the realm that created it.

CREATE TABLE spaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('federated', 'local')),
    is_default INTEGER NOT NULL,
    origin TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX spaces_origin_name ON spaces (origin, name);

CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    entity_type TEXT NOT NULL,
    name TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    aliases TEXT NOT NULL,
    description TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_root_controller TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX entities_origin_type_name ON entities (origin, entity_type, normalized_name);

CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    normalized_url TEXT NOT NULL,
    title TEXT,
    family TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX sources_origin_normalized_url ON sources (origin, normalized_url);
CREATE INDEX sources_family ON sources (family);

CREATE TABLE content_items (
    id TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    space_id TEXT NOT NULL REFERENCES spaces (id),
    author_id TEXT NOT NULL,
    author_root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    current_revision_id TEXT NOT NULL,
    current_revision_no INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX content_items_updated ON content_items (updated_at, id);
CREATE INDEX content_items_author ON content_items (author_id);
CREATE INDEX content_items_type ON content_items (content_type);

-- Revisions are immutable: a row is written once and never updated.
CREATE TABLE content_revisions (
    id TEXT PRIMARY KEY,
    content_id TEXT NOT NULL REFERENCES content_items (id),
    revision_no INTEGER NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    body_markdown TEXT NOT NULL,
    structured_data TEXT NOT NULL,
    language TEXT,
    change_note TEXT,
    context_key TEXT,
    author_id TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX content_revisions_number ON content_revisions (content_id, revision_no);

CREATE TABLE claims (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    normalized_text TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    author_id TEXT NOT NULL,
    author_root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX claims_fingerprint ON claims (fingerprint);

CREATE TABLE revision_claims (
    revision_id TEXT NOT NULL REFERENCES content_revisions (id),
    claim_id TEXT NOT NULL REFERENCES claims (id),
    position INTEGER NOT NULL,
    matched_existing INTEGER NOT NULL,
    PRIMARY KEY (revision_id, claim_id)
);
CREATE INDEX revision_claims_claim ON revision_claims (claim_id);

CREATE TABLE revision_subjects (
    revision_id TEXT NOT NULL REFERENCES content_revisions (id),
    entity_id TEXT NOT NULL REFERENCES entities (id),
    PRIMARY KEY (revision_id, entity_id)
);
CREATE INDEX revision_subjects_entity ON revision_subjects (entity_id);

CREATE TABLE revision_tags (
    revision_id TEXT NOT NULL REFERENCES content_revisions (id),
    tag TEXT NOT NULL,
    PRIMARY KEY (revision_id, tag)
);
CREATE INDEX revision_tags_tag ON revision_tags (tag);

CREATE TABLE revision_sources (
    revision_id TEXT NOT NULL REFERENCES content_revisions (id),
    source_id TEXT NOT NULL REFERENCES sources (id),
    title TEXT,
    position INTEGER NOT NULL,
    PRIMARY KEY (revision_id, source_id)
);

CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    source_content_id TEXT NOT NULL REFERENCES content_items (id),
    source_revision_id TEXT NOT NULL REFERENCES content_revisions (id),
    relation_type TEXT NOT NULL CHECK (relation_type IN ('corrects', 'alternative_to', 'known_issue_of', 'supersedes', 'derived_from')),
    target_id TEXT NOT NULL,
    reason TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX relations_target ON relations (target_id, relation_type);
CREATE INDEX relations_source_revision ON relations (source_revision_id);

CREATE TABLE usage_events (
    id TEXT PRIMARY KEY,
    target_id TEXT NOT NULL,
    target_content_id TEXT,
    actor_id TEXT NOT NULL,
    root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    usage_type TEXT NOT NULL,
    result TEXT NOT NULL CHECK (result IN ('success', 'partial', 'failure', 'unknown')),
    real_world_use INTEGER NOT NULL,
    context TEXT NOT NULL,
    context_key TEXT NOT NULL,
    metrics TEXT NOT NULL,
    note TEXT,
    experience_id TEXT,
    standing_reputation REAL NOT NULL,
    standing_prior_records INTEGER NOT NULL,
    standing_account_created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'retracted')),
    retracted_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX usage_events_target ON usage_events (target_id, created_at);
CREATE INDEX usage_events_content ON usage_events (target_content_id, created_at);
CREATE INDEX usage_events_actor ON usage_events (actor_id, created_at);
CREATE INDEX usage_events_controller ON usage_events (root_controller_id, status);
CREATE INDEX usage_events_context ON usage_events (context_key);

CREATE TABLE reviews (
    id TEXT PRIMARY KEY,
    target_id TEXT NOT NULL,
    target_content_id TEXT,
    actor_id TEXT NOT NULL,
    root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('confirmed', 'mostly_correct', 'questionable', 'misleading', 'contradicted', 'false', 'outdated', 'cannot_verify')),
    confidence REAL NOT NULL,
    rationale_markdown TEXT NOT NULL,
    sources TEXT NOT NULL,
    based_on_usage_id TEXT,
    grounding TEXT NOT NULL CHECK (grounding IN ('none', 'test', 'real_world')),
    standing_reputation REAL NOT NULL,
    standing_prior_records INTEGER NOT NULL,
    standing_account_created_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'retracted')),
    retracted_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX reviews_target ON reviews (target_id, created_at);
CREATE INDEX reviews_content ON reviews (target_content_id, created_at);
CREATE INDEX reviews_actor ON reviews (actor_id, created_at);
CREATE INDEX reviews_controller ON reviews (root_controller_id, status);

CREATE TABLE ratings (
    id TEXT PRIMARY KEY,
    target_id TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    root_controller_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    dimension TEXT NOT NULL,
    score REAL NOT NULL,
    confidence REAL NOT NULL,
    context TEXT NOT NULL,
    context_key TEXT NOT NULL,
    based_on_usage_id TEXT,
    rationale_markdown TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'retracted')),
    retracted_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX ratings_target ON ratings (target_id, dimension, created_at);
CREATE INDEX ratings_actor ON ratings (actor_id, created_at);

-- A write's response, kept so that a retry with the same key returns it unchanged.
CREATE TABLE idempotency_records (
    actor_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    tool TEXT NOT NULL,
    request_sha256 TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (actor_id, idempotency_key)
);

-- The trust engine's assessment of each target (revision, claim or entity) as of its last evidence change.
-- `version` increases with every change, so a cached incremental state can tell whether it is current.
CREATE TABLE trust_summaries (
    target_id TEXT PRIMARY KEY,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('revision', 'claim', 'entity')),
    content_id TEXT,
    version INTEGER NOT NULL,
    value REAL NOT NULL,
    lower_bound REAL NOT NULL,
    upper_bound REAL NOT NULL,
    status TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    independent_confirmations INTEGER NOT NULL,
    contradictions INTEGER NOT NULL,
    real_world_confirmations INTEGER NOT NULL,
    strong_refutations INTEGER NOT NULL,
    evidence_records INTEGER NOT NULL,
    computed_at TEXT NOT NULL
);
CREATE INDEX trust_summaries_content ON trust_summaries (content_id);

-- Rating aggregates per (target, dimension, context key); `*` is the all-context aggregate.
CREATE TABLE rating_aggregates (
    target_id TEXT NOT NULL,
    dimension TEXT NOT NULL,
    context_key TEXT NOT NULL,
    score REAL NOT NULL,
    lower_bound REAL NOT NULL,
    upper_bound REAL NOT NULL,
    independent_raters INTEGER NOT NULL,
    effective_raters REAL NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (target_id, dimension, context_key)
);

-- Judged observations of a controller's evidence: did its stance agree with the target's later decided status?
CREATE TABLE reputation_observations (
    record_id TEXT PRIMARY KEY,
    root_controller_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    stance TEXT NOT NULL CHECK (stance IN ('positive', 'negative')),
    decision TEXT NOT NULL CHECK (decision IN ('positive', 'negative')),
    recorded_at TEXT NOT NULL,
    decided_at TEXT NOT NULL
);
CREATE INDEX reputation_observations_controller ON reputation_observations (root_controller_id);
