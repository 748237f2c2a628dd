-- Secrets the gateway makes for itself, the same for every process: the playground's keys are
-- derived from one (src/dashboard/playground.ts), so no process stores or passes a key's secret.
CREATE TABLE gateway_secrets (
  name text PRIMARY KEY,
  secret bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The playground now keeps one key per user instead of one per request: the earlier ones go.
UPDATE api_keys SET revoked_at = now() WHERE ephemeral AND revoked_at IS NULL;
CREATE UNIQUE INDEX api_keys_playground ON api_keys (user_id) WHERE ephemeral AND revoked_at IS NULL;
