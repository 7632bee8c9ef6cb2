-- The audit log is pruned by age (INTERAI_AUDIT_RETENTION_DAYS and `interai admin audit prune`), in small batches of
-- the oldest rows, so each batch must find them without reading the table.
CREATE INDEX IF NOT EXISTS mcp_calls_created_at ON mcp_calls (created_at);
