-- Inference requests refused (or failed) after their key was identified, for the user's usage
-- log (src/inference/refusal-log.ts). A table of their own, not rows of usage_records: nothing
-- here is money, so the outbox, the balances, charged_nano, usage_daily, the key spend sums and
-- reconcile never see them.
--
-- The ids come from usage_records' own sequence, so one (created_at, id) keyset orders and pages
-- both tables as one log.
CREATE TABLE refused_requests (
  id bigint PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('usage_records', 'id')),
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_id uuid,
  -- '' on an aggregate row.
  request_id text NOT NULL,
  -- '' when the request was refused before its model was read (a 402 before the body).
  model text NOT NULL DEFAULT '',
  surface text NOT NULL,
  stream boolean NOT NULL DEFAULT false,
  status integer NOT NULL,
  error_code text NOT NULL,
  latency_ms integer NOT NULL DEFAULT 0,
  -- 1 for one request; on an aggregate row, how many refusals of the key in that minute with that
  -- status were counted past REFUSALS_LOGGED_PER_MINUTE instead of logged one by one.
  requests integer NOT NULL DEFAULT 1,
  -- Set on aggregate rows only: the minute they count.
  minute timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX refused_user_time ON refused_requests (user_id, created_at DESC, id DESC);
CREATE INDEX refused_user_key_time ON refused_requests (user_id, key_id, created_at DESC, id DESC);
CREATE INDEX refused_user_model_time ON refused_requests (user_id, model, created_at DESC, id DESC);
CREATE UNIQUE INDEX refused_aggregate ON refused_requests (key_id, minute, status) WHERE minute IS NOT NULL;

-- Refusals logged one by one per key and minute, across every gateway process: the cap holds
-- however many processes write. Rows older than a few minutes are deleted as they are read.
CREATE TABLE refusal_minutes (
  key_id uuid NOT NULL,
  minute timestamptz NOT NULL,
  logged integer NOT NULL,
  PRIMARY KEY (key_id, minute)
);
