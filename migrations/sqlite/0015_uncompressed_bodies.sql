-- PostgreSQL stores inbound activities' bodies and replicated revisions' signed objects without compression from
-- this version on (its migration 0015 says why). SQLite never compresses values: nothing changes here, and the two
-- folders keep the same versions.
SELECT 1;
