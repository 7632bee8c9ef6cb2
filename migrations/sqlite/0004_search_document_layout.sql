-- Rebuilds search_documents so that searching stays fast and its full-text index stays attached to the right rows.
--
-- 1. The filter and ordering columns (created_at, updated_at) move ahead of the long text columns. SQLite stores a
--    row's columns in order and spills long rows onto overflow pages, so reading a column behind a 5 KB body meant
--    following the body's overflow chain for every candidate a search looked at.
-- 2. The rowid becomes an explicit INTEGER PRIMARY KEY (document_rowid). search_fts is an external-content index that
--    refers to documents by rowid, and VACUUM may renumber the implicit rowid of a table without one, which would
--    silently point the index at the wrong documents. The rowids are copied unchanged, so the index stays valid.

DROP TRIGGER search_documents_after_insert;
DROP TRIGGER search_documents_after_delete;
DROP TRIGGER search_documents_after_update;

CREATE TABLE search_documents_rebuilt (
    document_rowid INTEGER PRIMARY KEY,
    object_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('content', 'claim', 'entity')),
    object_type TEXT NOT NULL,
    space_id TEXT,
    trust_target_id TEXT NOT NULL,
    author_id TEXT,
    origin TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    document TEXT GENERATED ALWAYS AS (title) VIRTUAL
);
INSERT INTO search_documents_rebuilt (document_rowid, object_id, kind, object_type, space_id, trust_target_id,
    author_id, origin, created_at, updated_at, title, summary, body)
SELECT rowid, object_id, kind, object_type, space_id, trust_target_id, author_id, origin, created_at, updated_at,
    title, summary, body
FROM search_documents;
DROP TABLE search_documents;
ALTER TABLE search_documents_rebuilt RENAME TO search_documents;

CREATE INDEX search_documents_updated ON search_documents (updated_at, object_id);
CREATE INDEX search_documents_created ON search_documents (created_at);
CREATE INDEX search_documents_trust_target ON search_documents (trust_target_id);

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
