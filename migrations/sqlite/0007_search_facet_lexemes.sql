-- PostgreSQL stores facet terms as lexemes of their own in this version. SQLite's FTS5 index already keeps them in
-- columns of their own, which a search names, so it needs no change; this file keeps the two migration folders at
-- the same versions.
SELECT 1;
