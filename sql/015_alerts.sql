-- Alerts (src/admin/alerts.ts). A user's low-balance threshold; null: no alert.
ALTER TABLE users ADD COLUMN low_balance_nano bigint CHECK (low_balance_nano > 0);

-- One row per alert sent and not yet re-armed: inserting it is the claim that lets exactly one
-- gateway process send the mail; deleting it (the balance went back up, the route recovered)
-- arms the next one.
CREATE TABLE alerts_sent (
  kind text NOT NULL,
  subject text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, subject)
);
