-- The search vector table is rebuilt so that a text query's candidates can be found, estimated, ordered and paged
-- from rows small enough to stay in memory:
--
-- - each row names its document's trust target, so that candidates reach their trust summaries without visiting
--   their wide `search_documents` rows (only the page of results shown reads those);
-- - a small vector of the title and summary alone (`brief`, kept in the row) gives the estimate that chooses which
--   candidates are ranked exactly;
-- - the full vector (`document`) is stored out of line (`toast_tuple_target` at its minimum with EXTERNAL
--   storage): finding the matches needs only the GIN index, and the full vector is read only for the candidates
--   that are ranked exactly. With the full vector in the row every match cost a visit to a row of about 1.6 KB,
--   and the table was larger than the server's default shared buffers, so most of those visits missed them.
--
-- The table is rebuilt rather than altered in place: an UPDATE of every row would leave a dead copy of each row
-- behind, doubling the table until a vacuum (which cannot run inside a migration) reclaimed it. Change numbers,
-- and the sequence that continues them, are kept.

ALTER SEQUENCE search_change_numbers OWNED BY NONE;
CREATE TABLE search_vectors_rebuilt (
    change_number BIGINT PRIMARY KEY DEFAULT nextval('search_change_numbers'),
    object_id TEXT NOT NULL UNIQUE REFERENCES search_documents (object_id) ON DELETE CASCADE,
    trust_target_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    brief TSVECTOR NOT NULL,
    document TSVECTOR NOT NULL
) WITH (toast_tuple_target = 128);
ALTER TABLE search_vectors_rebuilt ALTER COLUMN brief SET STORAGE MAIN;
ALTER TABLE search_vectors_rebuilt ALTER COLUMN document SET STORAGE EXTERNAL;
INSERT INTO search_vectors_rebuilt (change_number, object_id, trust_target_id, created_at, updated_at, brief, document)
SELECT v.change_number, v.object_id, d.trust_target_id, v.created_at, v.updated_at,
       setweight(to_tsvector('english', d.title), 'A') || setweight(to_tsvector('english', d.summary), 'B'),
       v.document
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
