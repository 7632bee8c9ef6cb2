-- no-transaction
-- The audit log is pruned by age (INTERAI_AUDIT_RETENTION_DAYS and `interai admin audit prune`), in small batches of
-- the oldest rows, so each batch must find them without reading the table. The index is built CONCURRENTLY because
-- the audit log is the largest table and every call appends to it: a plain build would hold back every request for
-- as long as it takes. That needs a migration outside a transaction, which allows one statement only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS mcp_calls_created_at ON mcp_calls (created_at);
