-- An inbound activity's body is kept only until it is applied, and a replicated revision's signed object is written
-- once and read back only to relay it. Both are JSON of 2–4 KB, over the size at which PostgreSQL compresses a value
-- (pglz) before storing it out of line: while a peer caught up, compressing them was a tenth of the server's CPU.
-- They are stored out of line without compression instead (a change of metadata only: rows already written keep
-- their form, and the statement is instant on a large table).
ALTER TABLE inbox_activities ALTER COLUMN body SET STORAGE EXTERNAL;
ALTER TABLE content_revisions ALTER COLUMN signed_object SET STORAGE EXTERNAL;
