-- Usage records by month (issue 51). Each record writes three per-user indexes at the user's
-- place in them; over a year's table those places are hundreds of thousands of pages, more than
-- Postgres' buffers, so a request of a key or account not met lately read and wrote several
-- pages at random (docs/performance.md, "A year of data"). Partitioned by month, only the current
-- month's indexes take writes: a twelfth of the pages, and old months stay as they were.
--
-- What the rest relies on: every index ends in the partition key or is one of a partition's own,
-- so uniqueness is per month: a settle id with its created_at (a redelivered outbox entry carries
-- the record's created_at unchanged, so a duplicate meets its first copy in the same month), and
-- the id with its created_at (ids come from one sequence, as before). A DEFAULT partition takes
-- any row whose month has no partition yet, so no insert ever fails for want of one;
-- usage_records_cover() makes a month's partition, moving any such rows into it, and is called
-- for the month ahead by each writer (src/billing/outbox-writer.ts) and by the bench's fill;
-- usage_records_drop_before() drops the months retention has emptied.

LOCK TABLE usage_records IN ACCESS EXCLUSIVE MODE;
ALTER TABLE usage_records RENAME TO usage_records_unpartitioned;
-- The names go to the new table's indexes; the copy reads the heap alone.
ALTER TABLE usage_records_unpartitioned DROP CONSTRAINT usage_records_pkey;
DROP INDEX usage_user_time, usage_user_model_time, usage_user_key_time, usage_time, usage_settle,
  usage_user_error_time, usage_model_time, usage_route_time, usage_error_time, usage_error_status_time,
  usage_user_error_status_time;
DROP TRIGGER usage_totals_add ON usage_records_unpartitioned;

CREATE TABLE usage_records (
  id bigint GENERATED ALWAYS AS IDENTITY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_id uuid,
  request_id text NOT NULL,
  model text NOT NULL,
  surface text NOT NULL,
  stream boolean NOT NULL,
  status integer NOT NULL,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  cost_nano bigint NOT NULL DEFAULT 0 CHECK (cost_nano >= 0),
  official_cost_nano bigint NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL DEFAULT 0,
  ttft_ms integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  settle_id uuid,
  outbox_ref text,
  charged_after_nano bigint,
  overrun boolean NOT NULL DEFAULT false,
  route text,
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE usage_records_default PARTITION OF usage_records DEFAULT;

-- The partitions of the UTC months from `from_at` to `to_at`, made where missing; returns how
-- many were made. Rows the DEFAULT partition holds for such a month move into it first (written
-- to the partition itself, so the totals trigger, which is the parent's, does not count them
-- again). lock_timeout: a month's partition is made weeks ahead, so a writer that would wait
-- behind a long read of the table gives up and tries again later instead of stalling.
CREATE FUNCTION usage_records_cover(from_at timestamptz, to_at timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  month timestamp := date_trunc('month', from_at AT TIME ZONE 'UTC');
  made integer := 0;
  part text;
  lo timestamptz;
  hi timestamptz;
BEGIN
  WHILE month <= to_at AT TIME ZONE 'UTC' LOOP
    part := 'usage_records_' || to_char(month, 'YYYY_MM');
    lo := month AT TIME ZONE 'UTC';
    hi := (month + interval '1 month') AT TIME ZONE 'UTC';
    IF to_regclass(part) IS NULL THEN
      PERFORM set_config('lock_timeout', '2s', true);
      LOCK TABLE usage_records IN SHARE ROW EXCLUSIVE MODE;
      IF to_regclass(part) IS NULL THEN
        CREATE TEMP TABLE usage_records_moving ON COMMIT DROP AS
          WITH gone AS (DELETE FROM usage_records_default WHERE created_at >= lo AND created_at < hi RETURNING *)
          SELECT * FROM gone;
        EXECUTE format('CREATE TABLE %I PARTITION OF usage_records FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
        EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM usage_records_moving', part);
        DROP TABLE usage_records_moving;
        made := made + 1;
      END IF;
    END IF;
    month := month + interval '1 month';
  END LOOP;
  RETURN made;
END $$;

-- Drops the month partitions wholly before `cutoff` that hold no row (retention has emptied
-- them, src/billing/retention.ts), so that the months a query plans over stay those kept;
-- returns how many. A month still holding a row stays, whatever its age.
CREATE FUNCTION usage_records_drop_before(cutoff timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  part text;
  empty boolean;
  dropped integer := 0;
BEGIN
  PERFORM set_config('lock_timeout', '2s', true);
  FOR part IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'usage_records'::regclass AND c.relname ~ '^usage_records_\d{4}_\d{2}$'
      AND (to_date(substr(c.relname, 15), 'YYYY_MM') + interval '1 month') AT TIME ZONE 'UTC' <= cutoff
    ORDER BY c.relname
  LOOP
    EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %I)', part) INTO empty;
    IF empty THEN
      EXECUTE format('DROP TABLE %I', part);
      dropped := dropped + 1;
    END IF;
  END LOOP;
  RETURN dropped;
END $$;

SELECT usage_records_cover(
  least(now(), (SELECT min(created_at) FROM usage_records_unpartitioned)),
  greatest(now() + interval '1 month', (SELECT max(created_at) FROM usage_records_unpartitioned)));
INSERT INTO usage_records OVERRIDING SYSTEM VALUE
  SELECT id, user_id, key_id, request_id, model, surface, stream, status, prompt_tokens, completion_tokens,
         cached_tokens, cache_write_tokens, cost_nano, official_cost_nano, latency_ms, ttft_ms, created_at,
         settle_id, outbox_ref, charged_after_nano, overrun, route
  FROM usage_records_unpartitioned;
-- Ids go on rising from where the old table's sequence was: refused_requests takes its ids from
-- usage_records' sequence by name (sql/026), and reconcile's checkpoint is an id.
SELECT setval(pg_get_serial_sequence('usage_records', 'id'),
              nextval(pg_get_serial_sequence('usage_records_unpartitioned', 'id')));
DROP TABLE usage_records_unpartitioned;

CREATE UNIQUE INDEX usage_settle ON usage_records (settle_id, created_at);
CREATE INDEX usage_user_time ON usage_records (user_id, created_at DESC, id DESC);
CREATE INDEX usage_user_model_time ON usage_records (user_id, model, created_at DESC, id DESC);
CREATE INDEX usage_user_key_time ON usage_records (user_id, key_id, created_at DESC, id DESC);
CREATE INDEX usage_time ON usage_records (created_at);
CREATE INDEX usage_user_error_time ON usage_records (user_id, created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);
CREATE INDEX usage_model_time ON usage_records (model, created_at DESC, id DESC);
CREATE INDEX usage_route_time ON usage_records (route, created_at DESC, id DESC) WHERE route IS NOT NULL;
CREATE INDEX usage_error_time ON usage_records (created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);
CREATE INDEX usage_error_status_time ON usage_records (status, created_at DESC, id DESC) WHERE NOT (status BETWEEN 200 AND 299);
CREATE INDEX usage_user_error_status_time ON usage_records (user_id, status, created_at DESC, id DESC)
  WHERE NOT (status BETWEEN 200 AND 299);

CREATE TRIGGER usage_totals_add AFTER INSERT ON usage_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_totals_add();
