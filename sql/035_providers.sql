-- Providers' API keys saved from the console (src/upstream/provider-keys.ts). The providers
-- themselves are entries of the saved catalogue (013); their keys live here, apart from it, so
-- that an export of the catalogue never carries one. A key is stored sealed with AES-256-GCM
-- under PROVIDER_KEY_SECRET (src/upstream/key-vault.ts); only its last four characters are kept
-- in the clear, to tell keys apart.
CREATE TABLE provider_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  provider_id text NOT NULL,
  label text NOT NULL DEFAULT '',
  sealed bytea NOT NULL,
  hint text NOT NULL,
  -- Share of the provider's requests this key takes among its enabled keys.
  weight integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000),
  enabled boolean NOT NULL DEFAULT true,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX provider_keys_provider ON provider_keys (provider_id, created_at);

-- Health by cause: what each failed attempt was, so that a missing key does not read as an
-- upstream outage (errors stays their sum).
ALTER TABLE route_health
  ADD COLUMN err_no_key bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_key_refused bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_timeout bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_connect bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_rate_limited bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_server bigint NOT NULL DEFAULT 0,
  ADD COLUMN err_other bigint NOT NULL DEFAULT 0;
-- Failures counted before causes were: their cause is not known.
UPDATE route_health SET err_other = errors;
