-- The per-user and per-key daily totals by month (issue 51). A request of an account or key not
-- met today inserts or updates its row of the day in usage_daily and usage_key_daily: one place
-- per user (per key) in a primary key that holds every day of a year, so over a year's tables it
-- read and wrote pages at random, more than Postgres' buffers hold (docs/performance.md, "A year
-- of data"). Partitioned by month of `day`, a day's rows go to the current month's table and
-- indexes only; old months stay as they were. The primary keys end in `day`, so they hold per
-- partition as they held per table, and the totals trigger's ON CONFLICT finds its row as before.
--
-- A DEFAULT partition takes a day whose month has no partition yet; daily_totals_cover() makes a
-- month's partition, moving any such rows into it. usage_months_cover() makes the months of the
-- records and of both daily tables, and is what the writers (src/billing/usage-months.ts) and the
-- bench's fill call. The totals are kept for ever: retention drops no month here.

-- Writers' inserts (whose trigger writes these tables) wait until the copy is done.
LOCK TABLE usage_records IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE usage_daily, usage_key_daily IN ACCESS EXCLUSIVE MODE;
ALTER TABLE usage_daily RENAME TO usage_daily_unpartitioned;
ALTER TABLE usage_key_daily RENAME TO usage_key_daily_unpartitioned;
-- The names go to the new tables' keys; the copy reads the heaps alone.
ALTER TABLE usage_daily_unpartitioned DROP CONSTRAINT usage_daily_pkey;
ALTER TABLE usage_key_daily_unpartitioned DROP CONSTRAINT usage_key_daily_pkey;

CREATE TABLE usage_daily (
  user_id uuid NOT NULL,
  day date NOT NULL,
  model text NOT NULL,
  requests bigint NOT NULL,
  prompt_tokens bigint NOT NULL,
  completion_tokens bigint NOT NULL,
  cached_tokens bigint NOT NULL,
  cost_nano bigint NOT NULL,
  official_cost_nano bigint NOT NULL
) PARTITION BY RANGE (day);
CREATE TABLE usage_daily_default PARTITION OF usage_daily DEFAULT;

CREATE TABLE usage_key_daily (
  key_id uuid NOT NULL,
  day date NOT NULL,
  user_id uuid NOT NULL,
  cost_nano bigint NOT NULL,
  last_at timestamptz
) PARTITION BY RANGE (day);
CREATE TABLE usage_key_daily_default PARTITION OF usage_key_daily DEFAULT;

-- The month partitions of `parent` (a table partitioned by its `day`) from the month of
-- `from_day` to that of `to_day`, made where missing; returns how many were made. Rows DEFAULT
-- holds for such a month move into it first (Postgres refuses the partition while DEFAULT holds
-- one of its rows). lock_timeout: a month is made weeks ahead, so a writer that would wait behind
-- a long read gives up and tries again later instead of stalling.
CREATE FUNCTION daily_totals_cover(parent text, from_day date, to_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  month date := date_trunc('month', from_day)::date;
  made integer := 0;
  part text;
BEGIN
  WHILE month <= to_day LOOP
    part := parent || '_' || to_char(month, 'YYYY_MM');
    IF to_regclass(part) IS NULL THEN
      PERFORM set_config('lock_timeout', '2s', true);
      EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', parent);
      IF to_regclass(part) IS NULL THEN
        EXECUTE format('CREATE TEMP TABLE daily_totals_moving ON COMMIT DROP AS
            WITH gone AS (DELETE FROM %I WHERE day >= %L AND day < %L RETURNING *) SELECT * FROM gone',
          parent || '_default', month, (month + interval '1 month')::date);
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
          part, parent, month, (month + interval '1 month')::date);
        EXECUTE format('INSERT INTO %I SELECT * FROM daily_totals_moving', part);
        DROP TABLE daily_totals_moving;
        made := made + 1;
      END IF;
    END IF;
    month := (month + interval '1 month')::date;
  END LOOP;
  RETURN made;
END $$;

-- The months of the records and of the daily totals, in the order the writers' inserts take the
-- tables (records, then the totals their trigger writes), so that the two never wait on each
-- other in a circle.
CREATE FUNCTION usage_months_cover(from_at timestamptz, to_at timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  from_day date := (from_at AT TIME ZONE 'UTC')::date;
  to_day date := (to_at AT TIME ZONE 'UTC')::date;
  made integer;
BEGIN
  made := usage_records_cover(from_at, to_at);
  made := made + daily_totals_cover('usage_daily', from_day, to_day);
  RETURN made + daily_totals_cover('usage_key_daily', from_day, to_day);
END $$;

SELECT daily_totals_cover('usage_daily',
  least(current_date, (SELECT min(day) FROM usage_daily_unpartitioned)),
  greatest(current_date + 31, (SELECT max(day) FROM usage_daily_unpartitioned)));
SELECT daily_totals_cover('usage_key_daily',
  least(current_date, (SELECT min(day) FROM usage_key_daily_unpartitioned)),
  greatest(current_date + 31, (SELECT max(day) FROM usage_key_daily_unpartitioned)));
INSERT INTO usage_daily SELECT * FROM usage_daily_unpartitioned;
INSERT INTO usage_key_daily SELECT key_id, day, user_id, cost_nano, last_at FROM usage_key_daily_unpartitioned;
DROP TABLE usage_daily_unpartitioned;
DROP TABLE usage_key_daily_unpartitioned;

-- Keys after the copy: one build per partition, not a row at a time.
ALTER TABLE usage_daily ADD PRIMARY KEY (user_id, day, model);
ALTER TABLE usage_daily ADD FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;
ALTER TABLE usage_key_daily ADD PRIMARY KEY (key_id, day);
ALTER TABLE usage_key_daily ADD FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;
-- New tables have no statistics until analyzed: the planner then guesses hundreds of rows for a
-- key's day, and an account's load, planned at many times its cost, was JIT-compiled on the
-- request path (470 ms a lookup on a year's copy).
ANALYZE usage_daily;
ANALYZE usage_key_daily;
