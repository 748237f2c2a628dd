-- Dashboard support: running totals of usage_records, so that the dashboard's usage totals and
-- the public stats cost a read of a few hundred rows however many requests were made.
--
-- Both tables are kept by one statement-level trigger inside the transaction that inserts the
-- records (the usage writer's batch: one INSERT per batch), so they always hold exactly the sums
-- of the committed records. usage_records is append-only; rows only ever leave it with their
-- user (ON DELETE CASCADE), and then the user's daily rows go too.

-- Per user, UTC day and model: GET /api/dashboard/usage-stats reads whole days here and only
-- the partial days at the ends of a range from usage_records.
CREATE TABLE usage_daily (
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day date NOT NULL,
  model text NOT NULL,
  requests bigint NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  cached_tokens bigint NOT NULL,
  cost_nano bigint NOT NULL,
  official_cost_nano bigint NOT NULL,
  PRIMARY KEY (user_id, day, model)
);

-- Gateway-wide, per hour: GET /api/public/stats. They count requests served, so deleting an
-- account does not take its requests out of them.
CREATE TABLE usage_hourly (
  hour timestamptz PRIMARY KEY,
  requests bigint NOT NULL,
  tokens bigint NOT NULL
);

CREATE FUNCTION usage_totals_add() RETURNS trigger LANGUAGE plpgsql AS $$
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

  INSERT INTO usage_hourly AS h (hour, requests, tokens)
  SELECT date_bin('1 hour', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*),
         sum(prompt_tokens::bigint + completion_tokens)
  FROM new_rows GROUP BY 1 ORDER BY 1
  ON CONFLICT (hour) DO UPDATE SET requests = h.requests + EXCLUDED.requests, tokens = h.tokens + EXCLUDED.tokens;
  RETURN NULL;
END $$;

CREATE TRIGGER usage_totals_add AFTER INSERT ON usage_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_totals_add();

-- Records written before this migration.
INSERT INTO usage_daily (user_id, day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
       sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
FROM usage_records GROUP BY 1, 2, 3;

INSERT INTO usage_hourly (hour, requests, tokens)
SELECT date_bin('1 hour', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*), sum(prompt_tokens::bigint + completion_tokens)
FROM usage_records GROUP BY 1;
