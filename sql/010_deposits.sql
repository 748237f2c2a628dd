-- Deposits from payment providers (src/payments/). A deposit row is created 'pending' with its
-- amount, currency and credit fixed; it moves once, by a conditional UPDATE, to 'paid' (with
-- the balance credit in the same transaction), 'expired' or 'failed'.
--
-- The provider's payment reference (Midtrans transaction_id, epusdt trade_id, the merchant
-- watcher's reference) lives in external_id, unique per method through deposits_external
-- (001_init.sql): one payment can never pay two deposits.

-- Who confirms the deposit: 'midtrans', 'qris' (own merchant), 'epusdt'; NULL for operator credits.
ALTER TABLE deposits ADD COLUMN provider text;

-- The sweeper's scan and the per-user count of open invoices.
CREATE INDEX deposits_pending_expiry ON deposits (expires_at) WHERE status = 'pending';
CREATE INDEX deposits_pending_user ON deposits (user_id, expires_at) WHERE status = 'pending';

-- Own-merchant QRIS codes carry no order reference: the amount tells open invoices apart, so
-- no two may share one.
CREATE UNIQUE INDEX deposits_qris_open_amount ON deposits (amount) WHERE provider = 'qris' AND status = 'pending';
