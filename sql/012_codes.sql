-- Redemption codes (issue 33): an admin makes a batch of codes worth an amount until an expiry;
-- a user redeems one on the top-up page. Only a code's SHA-256 is kept, like a key's: a code is
-- a bearer of money, shown once when it is made.
CREATE TABLE redemption_codes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  batch_id uuid NOT NULL,
  code_hash text NOT NULL UNIQUE,
  -- The first characters, to tell codes apart in lists.
  prefix text NOT NULL,
  credit_nano bigint NOT NULL CHECK (credit_nano > 0),
  expires_at timestamptz NOT NULL,
  note text NOT NULL DEFAULT '',
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Set once, by the conditional UPDATE that redeems it (src/admin/codes.ts); the credit is a
  -- paid deposit of method 'code' whose external_id is this code's id, which deposits_external
  -- (001_init.sql) keeps unique: a code credits once even if the UPDATE's guard were lost.
  redeemed_by uuid REFERENCES users(id) ON DELETE SET NULL,
  redeemed_at timestamptz,
  deposit_id uuid
);
CREATE INDEX redemption_codes_batch ON redemption_codes (batch_id, created_at);
CREATE INDEX redemption_codes_time ON redemption_codes (created_at DESC, id);
