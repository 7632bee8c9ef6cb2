-- PostgreSQL keeps each search document's vector in a narrow table of its own, numbered in the order documents
-- last changed. In `search_documents` the vector was stored out of line (rows with a body are wider than 2 KB), so
-- ranking a candidate meant fetching its vector from TOAST storage, and finding a query's most recent candidates
-- meant visiting each match's wide row for `updated_at`. Here the vector stays in the row (STORAGE MAIN), next to
-- what a search reads besides it: the change number that orders the candidate pool, and the times that snapshots
-- and the recency order check. A document that changes gets a new change number, like SQLite's rowids.

CREATE SEQUENCE search_change_numbers;
CREATE TABLE search_vectors (
    change_number BIGINT PRIMARY KEY DEFAULT nextval('search_change_numbers'),
    object_id TEXT NOT NULL UNIQUE REFERENCES search_documents (object_id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    document TSVECTOR NOT NULL
);
ALTER SEQUENCE search_change_numbers OWNED BY search_vectors.change_number;
ALTER TABLE search_vectors ALTER COLUMN document SET STORAGE MAIN;
INSERT INTO search_vectors (object_id, created_at, updated_at, document)
SELECT object_id, created_at, updated_at, document FROM search_documents ORDER BY updated_at, object_id;
CREATE INDEX search_vectors_document ON search_vectors USING GIN (document);
ALTER TABLE search_documents DROP COLUMN document;
-- The planner chooses between the text index and the change order by how common a query's words are, which it
-- knows only from statistics; without them the first searches after this migration would be planned blind.
ANALYZE search_vectors;
