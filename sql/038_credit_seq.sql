-- Each credit (a deposit paid, an operator's credit or debit) numbers itself per user, in the
-- statement that moves the balance. An account's load reads the number with the balance, so the
-- hot store can tell whether a credit racing the load is in the snapshot already or not
-- (src/store/lua/credit.lua, prime.lua): without it, a credit committed between the snapshot's
-- read and the load was missed, or one committed before the read counted twice.
ALTER TABLE users ADD COLUMN IF NOT EXISTS credit_seq bigint NOT NULL DEFAULT 0;
