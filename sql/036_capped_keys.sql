-- An account's load (src/billing/balances.ts) reads the spend of the user's capped keys. Through
-- api_keys_user it visited every key of the user, and their rows, to find that most have no cap:
-- for a user the process has not met, an index page and a heap page or more read from disk or
-- the OS, per account, on the request path. Only capped keys are in this one, so a user without
-- any costs one probe of a small index that stays in memory.
CREATE INDEX api_keys_capped ON api_keys (user_id) WHERE spend_limit_nano IS NOT NULL AND spend_limit_period IS NOT NULL;
