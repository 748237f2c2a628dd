-- A year of data (issue 51): running totals for what the request path and the admin pages
-- summed from usage_records, and the indexes the usage log's status filter and the revenue
-- report's deposits need. Kept by the same statement-level trigger as usage_daily, in the
-- transaction that inserts the records, so they always hold exactly the committed sums.

-- Records committed while this runs (by a writer still on the old trigger) would be missed by
-- the backfill: writers wait for it instead.
LOCK TABLE usage_records IN SHARE MODE;

-- Per key and UTC day: a capped key's spend in its period (day, ISO week, month, all time) is a
-- sum of at most a period's days here, not of every record of the key (2.2 s at a year's
-- history). A key's rows go with its user.
CREATE TABLE usage_key_daily (
  key_id uuid NOT NULL,
  day date NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  cost_nano bigint NOT NULL,
  PRIMARY KEY (key_id, day)
);
CREATE INDEX usage_key_daily_user ON usage_key_daily (user_id);

-- Gateway-wide per UTC day and model: the admin revenue report reads days × models rows here
-- instead of scanning every user's usage_daily. Revenue earned stays when an account is deleted.
CREATE TABLE usage_model_daily (
  day date NOT NULL,
  model text NOT NULL,
  requests bigint NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  cached_tokens bigint NOT NULL,
  cost_nano bigint NOT NULL,
  official_cost_nano bigint NOT NULL,
  PRIMARY KEY (day, model)
);

CREATE OR REPLACE FUNCTION usage_totals_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- ORDER BY: concurrent batches take the row locks in one order, so they queue, never
  -- deadlock. UTC days and date_bin keep the buckets independent of the session time zone.
  INSERT INTO usage_daily AS d (user_id, day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
  SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
         sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
  FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (user_id, day, model) DO UPDATE SET
    requests = d.requests + EXCLUDED.requests,
    prompt_tokens = d.prompt_tokens + EXCLUDED.prompt_tokens,
    completion_tokens = d.completion_tokens + EXCLUDED.completion_tokens,
    cached_tokens = d.cached_tokens + EXCLUDED.cached_tokens,
    cost_nano = d.cost_nano + EXCLUDED.cost_nano,
    official_cost_nano = d.official_cost_nano + EXCLUDED.official_cost_nano;

  -- A key is one user's: grouping by the user too changes nothing but carries it.
  INSERT INTO usage_key_daily AS k (key_id, day, user_id, cost_nano)
  SELECT key_id, (created_at AT TIME ZONE 'UTC')::date, user_id, sum(cost_nano)
  FROM new_rows WHERE key_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2
  ON CONFLICT (key_id, day) DO UPDATE SET cost_nano = k.cost_nano + EXCLUDED.cost_nano;

  INSERT INTO usage_model_daily AS m (day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
  SELECT (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
         sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
  FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (day, model) DO UPDATE SET
    requests = m.requests + EXCLUDED.requests,
    prompt_tokens = m.prompt_tokens + EXCLUDED.prompt_tokens,
    completion_tokens = m.completion_tokens + EXCLUDED.completion_tokens,
    cached_tokens = m.cached_tokens + EXCLUDED.cached_tokens,
    cost_nano = m.cost_nano + EXCLUDED.cost_nano,
    official_cost_nano = m.official_cost_nano + EXCLUDED.official_cost_nano;

  INSERT INTO usage_hourly AS h (hour, requests, tokens)
  SELECT date_bin('1 hour', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*),
         sum(prompt_tokens::bigint + completion_tokens)
  FROM new_rows GROUP BY 1 ORDER BY 1
  ON CONFLICT (hour) DO UPDATE SET requests = h.requests + EXCLUDED.requests, tokens = h.tokens + EXCLUDED.tokens;
  RETURN NULL;
END $$;

-- Records written before this migration.
INSERT INTO usage_key_daily (key_id, day, user_id, cost_nano)
SELECT key_id, (created_at AT TIME ZONE 'UTC')::date, user_id, sum(cost_nano)
FROM usage_records WHERE key_id IS NOT NULL GROUP BY 1, 2, 3;

INSERT INTO usage_model_daily (day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
SELECT (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
       sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
FROM usage_records GROUP BY 1, 2;

-- The usage log filtered to errors (a status outside 2xx): only the errors are in it, so the
-- heaviest user's error page reads its rows, not every answered request before them. The query
-- repeats the predicate literally (src/dashboard/usage.ts), as a generic plan needs.
CREATE INDEX usage_user_error_time ON usage_records (user_id, created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);

-- The revenue report's deposits: the paid ones of the last N days.
CREATE INDEX deposits_paid_time ON deposits (paid_at) WHERE status = 'paid';

-- The admin's deposit list across users, newest first: its first page without sorting them all
-- (66 ms at 42k deposits, bench/data.ts).
CREATE INDEX deposits_time ON deposits (created_at DESC, id DESC);
