-- Retention (USAGE_RETENTION_DAYS, src/billing/retention.ts): request-level rows older than the
-- setting are deleted; the running totals (usage_daily, usage_hourly, usage_key_daily,
-- usage_model_daily) are kept for ever. A usage record leaves only once reconcile's checkpoint
-- has passed it, and its charge is added here in the same transaction, so `reconcile --full`
-- still sums every charge ever made: these plus the records that remain.
CREATE TABLE usage_retired (
  user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  charges_nano bigint NOT NULL,
  records bigint NOT NULL
);

-- The refusals are read per user; their deletion by age needs its own way in.
CREATE INDEX refused_time ON refused_requests (created_at);
