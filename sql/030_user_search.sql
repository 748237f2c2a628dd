-- The admin's user search is a substring of the address (`LIKE '%q%'`), which no btree serves:
-- it read every user (44-77 ms at 100k). A trigram index serves substrings of 3 characters or
-- more. pg_trgm is a trusted extension (PostgreSQL 13+): a database owner may create it; the
-- embedded database loads it (src/store/sql.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX users_email_trgm ON users USING gin (email gin_trgm_ops);
