-- The operator's side (issue 33): admins, disabled accounts, balance adjustments made by hand,
-- and the audit log of every admin action.

-- Admins use the same accounts and sessions as users; the flag opens /api/admin/*.
ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false;
-- A disabled account's keys stop resolving and its sessions are ended; nothing else changes.
ALTER TABLE users ADD COLUMN disabled_at timestamptz;

-- Credits and debits by an operator or admin, each with its reason: the balance never moves
-- without a row that says why. Signed: a debit is negative. The reconciliation counts them
-- beside paid deposits (src/billing/reconcile.ts).
CREATE TABLE balance_adjustments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  amount_nano bigint NOT NULL CHECK (amount_nano <> 0),
  reason text NOT NULL CHECK (reason <> ''),
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX balance_adjustments_user ON balance_adjustments (user_id, created_at DESC);

-- Who did what, and the state before and after. No foreign keys: an entry outlives its actor
-- and its target. Append-only, enforced below, so that not even a bug in the gateway can
-- rewrite the history it is meant to keep.
CREATE TABLE admin_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor_id uuid,
  actor text NOT NULL,
  action text NOT NULL,
  target text,
  reason text,
  before jsonb,
  after jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX admin_audit_time ON admin_audit (created_at DESC, id DESC);

CREATE FUNCTION admin_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'admin_audit is append-only';
END $$;
CREATE TRIGGER admin_audit_no_update BEFORE UPDATE OR DELETE ON admin_audit
  FOR EACH ROW EXECUTE FUNCTION admin_audit_append_only();
CREATE TRIGGER admin_audit_no_truncate BEFORE TRUNCATE ON admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION admin_audit_append_only();
