-- The per-key daily totals' index on user_id served nothing the product reads: spend caps read
-- them by key (the primary key), and the only use was the cascade of a user's deletion, which
-- the product never does (an operator deleting one by hand now waits for a scan of this
-- table). Each key's first record of a day wrote it at a random place, like the primary key:
-- for a key never seen, one page read and written more on the request path's writer.
DROP INDEX IF EXISTS usage_key_daily_user;
