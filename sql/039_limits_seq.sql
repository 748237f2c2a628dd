-- Each change of a key's spend cap numbers itself per user, in the statement that makes it. An
-- account's load reads the number with the caps' spend; the change marks the hot store with it,
-- and a load whose snapshot was read before the change is refused and reads again
-- (src/store/lua/prime.lua). Without it, a load racing the change could install an account
-- without the new cap's spend, and the cap counted from zero until the account was loaded again.
ALTER TABLE users ADD COLUMN IF NOT EXISTS limits_seq bigint NOT NULL DEFAULT 0;
