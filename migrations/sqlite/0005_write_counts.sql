-- Successful writes per root controller and minute. The write rate limit sums the buckets of the last hour instead
-- of counting audit rows one by one, so checking it costs the same whatever limit is configured (counting rows made
-- every write slower the more writes the hour already held). A bucket is updated in the same transaction as the
-- write's audit row, so the buckets count exactly the writes that committed.
CREATE TABLE write_counts (
    root_controller_id TEXT NOT NULL,
    minute_start TEXT NOT NULL,
    writes INTEGER NOT NULL,
    PRIMARY KEY (root_controller_id, minute_start)
);

-- The writes of the last hour carry over, so an upgrade does not reset anyone's limit.
INSERT INTO write_counts (root_controller_id, minute_start, writes)
SELECT root_controller_id, strftime('%Y-%m-%dT%H:%M:00+00:00', created_at), COUNT(*)
FROM mcp_calls
WHERE is_write AND outcome = 'ok' AND created_at > strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '-61 minutes')
GROUP BY root_controller_id, strftime('%Y-%m-%dT%H:%M:00+00:00', created_at);

-- The audit log no longer answers the rate limit, so its window index only cost every call an index write.
DROP INDEX mcp_calls_write_window;
