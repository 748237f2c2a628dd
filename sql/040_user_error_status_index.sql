-- The usage log filtered by one error status (`?status=502`): each user's error rows by status,
-- newest first, so that the query reads the user's rows of that status in order and stops at a
-- page. Without it the first runs of the statement (custom plans, the status a literal) chose
-- the gateway-wide index of that status (sql/034) and filtered every user's rows by user: on
-- bench:data's year, 92,000 pages and 0.6-1.5 s for the heaviest user, because the estimate of
-- a status that is both "= 502" and outside 200-299 came out about fifty times too small. Error
-- rows are about 2 % of the records: the index is small, and only they write it.
CREATE INDEX IF NOT EXISTS usage_user_error_status_time ON usage_records (user_id, status, created_at DESC, id DESC)
  WHERE NOT (status BETWEEN 200 AND 299);
