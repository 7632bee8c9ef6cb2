-- PostgreSQL moves its search vectors into a narrow table of their own in this version and drops the vector column
-- of `search_documents`. SQLite's full-text index already lives apart from the documents, in change order; here the
-- placeholder column that stood for PostgreSQL's vector (a virtual copy of the title, never read) goes as well, so
-- that the two schemas keep the same columns.
ALTER TABLE search_documents DROP COLUMN document;
