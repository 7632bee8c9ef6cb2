-- Facet terms enter the document vector as lexemes of their own instead of words of weight D. Each lexeme is the
-- term after a space: the text parser never yields a word containing a space, so no title or body can pass for a
-- filter, and a filtered search needs no weight restriction. A weight restriction makes PostgreSQL recheck every
-- index match against the stored vector (reading it from out-of-line storage), which cost more than the rest of
-- a search together.

ALTER TABLE search_documents DROP COLUMN document;
ALTER TABLE search_documents ADD COLUMN document TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A')
    || setweight(to_tsvector('english', summary), 'B')
    || setweight(to_tsvector('english', left(body, 100000)), 'C')
    || array_to_tsvector(string_to_array(' ' || replace(facets || ' ' || status_facet, ' ', '| '), '|'))
) STORED;
CREATE INDEX search_documents_document ON search_documents USING GIN (document);
