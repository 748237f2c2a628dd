-- The admin request log (issue 52, src/admin/requests.ts): every request across users, newest
-- first, by user, key, model, route, status and time.
--
-- The route that answered (provider/model, the catalogue's Route.key), carried from the request
-- through the outbox record. Null on records written before this migration, or by a gateway
-- that predates it, and on requests cut short before any route answered.
ALTER TABLE usage_records ADD COLUMN route text;

-- The per-user indexes (sql/001) serve the user and key filters (a key's owner is looked up
-- first); across users a filter on model or route would walk usage_time backwards through
-- every other model's rows: for a rare or retired model, millions of rows for one page.
-- Each of these is written by every insert, so only these: measured in docs/performance.md.
CREATE INDEX usage_model_time ON usage_records (model, created_at DESC, id DESC);
-- Old rows have no route: left out, the index holds only what a filter can find.
CREATE INDEX usage_route_time ON usage_records (route, created_at DESC, id DESC) WHERE route IS NOT NULL;

-- Errors across users, and one error status across users. Partial: only the error rows (about
-- 2 % of them) are written to these, so they cost the inserts next to nothing. The queries
-- repeat the predicate literally, as a generic plan needs (as sql/029's per-user one).
CREATE INDEX usage_error_time ON usage_records (created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);
CREATE INDEX usage_error_status_time ON usage_records (status, created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);

-- Refusals across users by model: their table is small (capped per key and minute) and rarely
-- written, but a year of them is still a scan per page without this.
CREATE INDEX refused_model_time ON refused_requests (model, created_at DESC, id DESC);
