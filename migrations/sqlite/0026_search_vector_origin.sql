-- PostgreSQL copies each document's origin into its narrow search vector row in this version, so that a text query
-- filtered by origin needs no lookup of the document row per match. SQLite keeps no vector rows: a text query with an
-- origin joins each match's document row anyway (by its rowid) and checks the origin there, so nothing changes here.
-- The file exists so that both backends keep the same migration versions.
SELECT 1;
