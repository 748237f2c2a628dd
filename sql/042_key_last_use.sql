-- A key's last use from the per-key daily totals (issue 51). The usage writer updated each
-- key's row of api_keys (last_used_at) in every batch: for traffic spread over many keys, one more
-- row at a random place per record, and when its page had no room, each of api_keys' five indexes
-- written again. The trigger already writes the key's row of the day in usage_key_daily; it now
-- keeps the latest record's time there too, and readers take the later of that and
-- api_keys.last_used_at (which holds the uses before this migration, and is no longer written:
-- src/accounts/keys.ts, LAST_USED).

ALTER TABLE usage_key_daily ADD COLUMN last_at timestamptz;

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

  -- A key is one user's: grouping by the user too changes nothing but carries it. The key's
  -- last use rides on the same row (sql/042).
  INSERT INTO usage_key_daily AS k (key_id, day, user_id, cost_nano, last_at)
  SELECT key_id, (created_at AT TIME ZONE 'UTC')::date, user_id, sum(cost_nano), max(created_at)
  FROM new_rows WHERE key_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2
  ON CONFLICT (key_id, day) DO UPDATE SET cost_nano = k.cost_nano + EXCLUDED.cost_nano,
    last_at = greatest(k.last_at, EXCLUDED.last_at);

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
