-- The overview counts deleted content items on every view. Without an index it read every content item's row
-- (about 90-150 ms at 100,000 items in benches/console.rs); this partial index holds the deleted ones only, so the
-- count reads a few entries and the live count is the table's count less them.
CREATE INDEX IF NOT EXISTS content_items_deleted ON content_items (deleted_at) WHERE deleted_at IS NOT NULL;
