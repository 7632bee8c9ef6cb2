-- Each search vector row also names its document's trust target, so that ranking and paging a text query's
-- candidates reads only this table and the trust summaries; the wide `search_documents` rows are read only for the
-- page of results shown. The table is rebuilt rather than altered in place: an UPDATE of every row would leave a
-- dead copy of each vector behind, doubling the table that every search visits until a vacuum (which cannot run
-- inside a migration) reclaimed it. Change numbers, and the sequence that continues them, are kept.
--
-- Tried and measured on 100,000 items: the full vector out of line with a small title-and-summary vector in the row
-- for the estimate. The rows then stayed in shared buffers, but reading the full vector of the 200 candidates ranked
-- exactly from out-of-line storage cost more than it saved (search p50 18 ms and p99 170-200 ms against 14.5 and
-- 62 ms with the vector in the row).

ALTER SEQUENCE search_change_numbers OWNED BY NONE;
CREATE TABLE search_vectors_rebuilt (
    change_number BIGINT PRIMARY KEY DEFAULT nextval('search_change_numbers'),
    object_id TEXT NOT NULL UNIQUE REFERENCES search_documents (object_id) ON DELETE CASCADE,
    trust_target_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    document TSVECTOR NOT NULL
);
ALTER TABLE search_vectors_rebuilt ALTER COLUMN document SET STORAGE MAIN;
INSERT INTO search_vectors_rebuilt (change_number, object_id, trust_target_id, created_at, updated_at, document)
SELECT v.change_number, v.object_id, d.trust_target_id, v.created_at, v.updated_at, v.document
FROM search_vectors v JOIN search_documents d ON d.object_id = v.object_id ORDER BY v.change_number;
DROP TABLE search_vectors;
ALTER TABLE search_vectors_rebuilt RENAME TO search_vectors;
ALTER TABLE search_vectors RENAME CONSTRAINT search_vectors_rebuilt_pkey TO search_vectors_pkey;
ALTER TABLE search_vectors RENAME CONSTRAINT search_vectors_rebuilt_object_id_key TO search_vectors_object_id_key;
ALTER TABLE search_vectors RENAME CONSTRAINT search_vectors_rebuilt_object_id_fkey TO search_vectors_object_id_fkey;
ALTER SEQUENCE search_change_numbers OWNED BY search_vectors.change_number;
CREATE INDEX search_vectors_document ON search_vectors USING GIN (document);
-- This server may run without autovacuum; without statistics the first searches would be planned blind.
ANALYZE search_vectors;
