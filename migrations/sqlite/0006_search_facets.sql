-- Search filters become index terms, and the full-text index lists documents in the order they last changed.
--
-- 1. `facets` holds one term per filterable property of a document (its kind, its kind and type, its space, each tag
--    of a content item's current revision) and `status_facet` one for its trust status. Each term is a letter, the
--    value's UTF-8 bytes in lowercase hex, and a closing 0, so no tokenizer or stemmer alters it. A filtered search
--    adds these terms to its MATCH expression, and the index intersects them with the words instead of every match
--    being joined and checked one by one. The service keeps `status_facet` in step with the trust summary.
-- 2. `document_rowid` follows the order in which documents last changed (a document is written anew when its item
--    gets a new revision), so "the most recently changed matches" is a walk of the index from its end, which is
--    how a search over very many matches stays bounded (see docs/ARCHITECTURE.md, "Search"). Its last two bits
--    name the kind (1 content, 2 claim, 3 entity): a search for one kind checks the rowid the index already
--    returns, instead of adding a term that most documents carry, whose weight bm25 would compute over every one.

DROP TRIGGER search_documents_after_insert;
DROP TRIGGER search_documents_after_delete;
DROP TRIGGER search_documents_after_update;
DROP TABLE search_fts;

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
    facets TEXT NOT NULL,
    status_facet TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT NOT NULL,
    document TEXT GENERATED ALWAYS AS (title) VIRTUAL
);
INSERT INTO search_documents_rebuilt (document_rowid, object_id, kind, object_type, space_id, trust_target_id,
    author_id, origin, created_at, updated_at, facets, status_facet, title, summary, body)
SELECT ROW_NUMBER() OVER (ORDER BY d.updated_at, d.object_id) * 4
        + CASE d.kind WHEN 'content' THEN 1 WHEN 'claim' THEN 2 ELSE 3 END,
    d.object_id, d.kind, d.object_type, d.space_id, d.trust_target_id, d.author_id, d.origin, d.created_at,
    d.updated_at,
    'k' || lower(hex(d.kind)) || '0 t' || lower(hex(d.kind || '/' || d.object_type)) || '0'
        || CASE WHEN d.space_id IS NULL THEN '' ELSE ' p' || lower(hex(d.space_id)) || '0' END
        || CASE WHEN d.kind = 'content' THEN COALESCE((SELECT group_concat(' g' || lower(hex(rt.tag)) || '0', '')
            FROM revision_tags rt WHERE rt.revision_id = d.trust_target_id), '') ELSE '' END,
    's' || lower(hex(COALESCE((SELECT t.status FROM trust_summaries t WHERE t.target_id = d.trust_target_id),
        'unverified'))) || '0',
    d.title, d.summary, d.body
FROM search_documents d
ORDER BY d.updated_at, d.object_id;
DROP TABLE search_documents;
ALTER TABLE search_documents_rebuilt RENAME TO search_documents;

CREATE INDEX search_documents_updated ON search_documents (updated_at, object_id);
CREATE INDEX search_documents_created ON search_documents (created_at);
CREATE INDEX search_documents_trust_target ON search_documents (trust_target_id);

CREATE VIRTUAL TABLE search_fts USING fts5(
    title, summary, body, facets, status_facet,
    content = 'search_documents', content_rowid = 'document_rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO search_fts (search_fts) VALUES ('rebuild');

CREATE TRIGGER search_documents_after_insert AFTER INSERT ON search_documents BEGIN
    INSERT INTO search_fts (rowid, title, summary, body, facets, status_facet)
    VALUES (new.document_rowid, new.title, new.summary, new.body, new.facets, new.status_facet);
END;
CREATE TRIGGER search_documents_after_delete AFTER DELETE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, summary, body, facets, status_facet)
    VALUES ('delete', old.document_rowid, old.title, old.summary, old.body, old.facets, old.status_facet);
END;
CREATE TRIGGER search_documents_after_update AFTER UPDATE ON search_documents BEGIN
    INSERT INTO search_fts (search_fts, rowid, title, summary, body, facets, status_facet)
    VALUES ('delete', old.document_rowid, old.title, old.summary, old.body, old.facets, old.status_facet);
    INSERT INTO search_fts (rowid, title, summary, body, facets, status_facet)
    VALUES (new.document_rowid, new.title, new.summary, new.body, new.facets, new.status_facet);
END;
