-- SQLite rebuilds search_documents in this version (filter columns ahead of the long text, and an explicit rowid
-- for its external-content FTS index). PostgreSQL keeps long text out of line and indexes documents by object_id,
-- so it needs no change; this file keeps the two migration folders at the same versions.
SELECT 1;
