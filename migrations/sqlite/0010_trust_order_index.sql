-- Browsing by trust (a search without a query, sorted by trust, which is the default without a query) orders by
-- status rank, then lower bound (descending), then ID. The index of (status, lower bound) could not give that
-- order, because the rank is not the status's alphabetical order, so every such page read and sorted the trust
-- summary of every document (0.4 s on SQLite and 0.15 s on PostgreSQL with 150,000 documents). This index holds the
-- rank itself, written exactly as the search statements write it (`STATUS_RANK` in src/store/search.rs; an
-- expression index is used only for the identical expression), so a page walks the summaries in order and sorts
-- only the rows that tie on rank and lower bound. It replaces the old index, which only search used: a status filter
-- is now a rank filter.
DROP INDEX trust_summaries_rank;
CREATE INDEX trust_summaries_order ON trust_summaries ((CASE status WHEN 'high_confidence' THEN 0 WHEN 'supported' THEN 1
    WHEN 'unverified' THEN 2 WHEN 'disputed' THEN 3 WHEN 'outdated' THEN 4 WHEN 'superseded' THEN 5 ELSE 6 END),
    lower_bound DESC);
