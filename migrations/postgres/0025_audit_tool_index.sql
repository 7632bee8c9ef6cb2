-- no-transaction
-- The audit page and `GET /admin/audit` filter by tool, newest first. Without this index SQLite read and sorted the
-- whole log for it (about 340 ms p95 over 260,000 records in benches/console.rs; PostgreSQL walked the time index
-- instead, which stays fast only while the tool is frequent). It costs every audited call one more index entry.
-- Built CONCURRENTLY because every call appends to the log (one statement, outside a transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS mcp_calls_tool ON mcp_calls (tool, created_at);
