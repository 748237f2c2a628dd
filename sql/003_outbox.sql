-- Crash-safe charging (docs/architecture.md, "Reservations and settlement").
--
-- Usage records reach this table from the hot store's outbox, possibly more than once after a
-- crash: settle_id (the request's reservation id) makes the insert idempotent, and outbox_ref
-- tells a redelivery of the same outbox entry apart from a true duplicate.
ALTER TABLE usage_records
  ADD COLUMN settle_id uuid,
  ADD COLUMN outbox_ref text,
  -- users.charged_nano right after this row: lets a redelivered entry be corrected exactly.
  ADD COLUMN charged_after_nano bigint,
  -- The cost went past what was reserved; it was charged in full all the same.
  ADD COLUMN overrun boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX usage_settle ON usage_records (settle_id);

-- Every charge is taken in full, so a balance may end below zero by an overrun (the next
-- request is refused until a deposit). charged_nano is the running total of committed charges:
-- with the balance, read in one snapshot, it tells the hot store where to start.
ALTER TABLE users DROP CONSTRAINT users_balance_nano_check;
ALTER TABLE users ADD COLUMN charged_nano bigint NOT NULL DEFAULT 0;
UPDATE users u SET charged_nano = c.total
FROM (SELECT user_id, sum(cost_nano)::bigint AS total FROM usage_records GROUP BY user_id) c
WHERE c.user_id = u.id;

-- Per-key limits, set from the dashboard and enforced in the hot store.
ALTER TABLE api_keys
  ADD COLUMN rpm_limit integer CHECK (rpm_limit > 0),
  ADD COLUMN spend_limit_nano bigint CHECK (spend_limit_nano >= 0),
  ADD COLUMN spend_limit_period text CHECK (spend_limit_period IN ('day', 'week', 'month', 'total'));
