-- The audit page and `GET /admin/audit` filter by tool, newest first. Without this index SQLite read and sorted the
-- whole log for it (about 340 ms p95 over 260,000 records in benches/console.rs). It costs every audited call one
-- more index entry.
CREATE INDEX IF NOT EXISTS mcp_calls_tool ON mcp_calls (tool, created_at);
