-- Full-text search over content, claims and entities: one document per object, kept current by the service in
-- the same transaction as the change. `document` weighs title (A) over summary (B) over body (C).

CREATE TABLE search_documents (
    object_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('content', 'claim', 'entity')),
    object_type TEXT NOT NULL,
    space_id TEXT,
    trust_target_id TEXT NOT NULL,
    author_id TEXT,
    origin TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    document TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A')
        || setweight(to_tsvector('english', summary), 'B')
        || setweight(to_tsvector('english', left(body, 100000)), 'C')
    ) STORED
);
CREATE INDEX search_documents_document ON search_documents USING GIN (document);
CREATE INDEX search_documents_updated ON search_documents (updated_at, object_id);
CREATE INDEX search_documents_created ON search_documents (created_at);
CREATE INDEX search_documents_trust_target ON search_documents (trust_target_id);
CREATE INDEX trust_summaries_rank ON trust_summaries (status, lower_bound);

-- Where evidence was gathered: which content has usage or ratings in which context (for context-aware ranking).
CREATE INDEX ratings_context ON ratings (target_id, context_key);

-- A secret for signing search cursors, so that a client cannot forge one.
INSERT INTO instance_settings (name, value, updated_at)
VALUES ('cursor_secret', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), now())
ON CONFLICT (name) DO NOTHING;
