-- Ranking a text query's candidates needs, of each candidate's document, only its ID, its trust target and (for
-- the recency order) its change time. The document rows are wide (their bodies are stored in the row, and the
-- columns after the body live on overflow pages), so reaching those few columns through the rows cost a page or
-- more per candidate. This index holds exactly them, keyed by the full-text rowid, so that candidates are ranked
-- from it and only the page of results shown reads its rows.
CREATE INDEX search_documents_ranking ON search_documents (document_rowid, object_id, trust_target_id, updated_at);
