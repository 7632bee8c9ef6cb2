-- Search filters become index terms (the same terms as SQLite's, see its 0006): `facets` holds one term per
-- filterable property of a document (its kind, its kind and type, its space, each tag of a content item's current
-- revision) and `status_facet` one for its trust status, each a letter, the value's UTF-8 bytes in lowercase hex and
-- a closing 0. They enter the document vector with weight D, so a filtered search is one GIN lookup of words and
-- terms together, and ranking (which reads only the words of the query) is unaffected.

ALTER TABLE search_documents DROP COLUMN document;
ALTER TABLE search_documents ADD COLUMN facets TEXT NOT NULL DEFAULT '';
ALTER TABLE search_documents ADD COLUMN status_facet TEXT NOT NULL DEFAULT '';
UPDATE search_documents d SET
    facets = 'k' || encode(convert_to(d.kind, 'UTF8'), 'hex') || '0 t'
        || encode(convert_to(d.kind || '/' || d.object_type, 'UTF8'), 'hex') || '0'
        || CASE WHEN d.space_id IS NULL THEN '' ELSE ' p' || encode(convert_to(d.space_id, 'UTF8'), 'hex') || '0' END
        || CASE WHEN d.kind = 'content' THEN COALESCE((SELECT string_agg(' g' || encode(convert_to(rt.tag, 'UTF8'), 'hex')
            || '0', '' ORDER BY rt.tag) FROM revision_tags rt WHERE rt.revision_id = d.trust_target_id), '') ELSE '' END,
    status_facet = 's' || encode(convert_to(COALESCE((SELECT t.status FROM trust_summaries t
        WHERE t.target_id = d.trust_target_id), 'unverified'), 'UTF8'), 'hex') || '0';
ALTER TABLE search_documents ALTER COLUMN facets DROP DEFAULT;
ALTER TABLE search_documents ALTER COLUMN status_facet DROP DEFAULT;
ALTER TABLE search_documents ADD COLUMN document TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A')
    || setweight(to_tsvector('english', summary), 'B')
    || setweight(to_tsvector('english', left(body, 100000)), 'C')
    || setweight(to_tsvector('simple', facets || ' ' || status_facet), 'D')
) STORED;
CREATE INDEX search_documents_document ON search_documents USING GIN (document);
