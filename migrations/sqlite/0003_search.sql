-- Full-text search over content, claims and entities: one document per object, kept current by the service in
-- the same transaction as the change. FTS5 (porter stemming) indexes title, summary and body; `document` mirrors
-- PostgreSQL's column so both schemas list the same columns.

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
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    document TEXT GENERATED ALWAYS AS (title) VIRTUAL
);
CREATE INDEX search_documents_updated ON search_documents (updated_at, object_id);
CREATE INDEX search_documents_created ON search_documents (created_at);
CREATE INDEX search_documents_trust_target ON search_documents (trust_target_id);
CREATE INDEX trust_summaries_rank ON trust_summaries (status, lower_bound);

CREATE INDEX ratings_context ON ratings (target_id, context_key);

CREATE VIRTUAL TABLE search_fts USING fts5(
    title, summary, body,
    content = 'search_documents', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER search_documents_after_insert AFTER INSERT ON search_documents BEGIN
    INSERT INTO search_fts (rowid, title, summary, body) VALUES (new.rowid, new.title, new.summary, new.body);
END;
CREATE TRIGGER search_documents_after_delete AFTER DELETE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, summary, body) VALUES ('delete', old.rowid, old.title, old.summary, old.body);
END;
CREATE TRIGGER search_documents_after_update AFTER UPDATE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, summary, body) VALUES ('delete', old.rowid, old.title, old.summary, old.body);
    INSERT INTO search_fts (rowid, title, summary, body) VALUES (new.rowid, new.title, new.summary, new.body);
END;

-- A secret for signing search cursors, so that a client cannot forge one.
INSERT INTO instance_settings (name, value, updated_at)
VALUES ('cursor_secret', lower(hex(randomblob(32))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
ON CONFLICT (name) DO NOTHING;
