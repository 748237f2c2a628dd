-- Accounts, keys, deposits and usage. Money is bigint nano-USD (API.md §2).

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL UNIQUE,
  password_hash text,
  email_verified_at timestamptz,
  -- The durable balance: credited deposits minus charged usage, never below zero.
  balance_nano bigint NOT NULL DEFAULT 0 CHECK (balance_nano >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT '',
  -- SHA-256 of the full key, hex. The key itself is never stored.
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at DESC);

CREATE TABLE deposits (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  method text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'expired', 'failed')),
  amount numeric NOT NULL,
  currency text NOT NULL,
  credit_nano bigint NOT NULL CHECK (credit_nano >= 0),
  external_id text,
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz,
  expires_at timestamptz
);
CREATE INDEX deposits_user ON deposits (user_id, created_at DESC, id);
CREATE UNIQUE INDEX deposits_external ON deposits (method, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE usage_records (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_id uuid,
  request_id text NOT NULL,
  model text NOT NULL,
  surface text NOT NULL,
  stream boolean NOT NULL,
  status integer NOT NULL,
  prompt_tokens integer NOT NULL DEFAULT 0,
  completion_tokens integer NOT NULL DEFAULT 0,
  cached_tokens integer NOT NULL DEFAULT 0,
  cache_write_tokens integer NOT NULL DEFAULT 0,
  cost_nano bigint NOT NULL DEFAULT 0 CHECK (cost_nano >= 0),
  official_cost_nano bigint NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL DEFAULT 0,
  ttft_ms integer,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The dashboard reads one user's log newest first, optionally by model or key.
CREATE INDEX usage_user_time ON usage_records (user_id, created_at DESC, id DESC);
CREATE INDEX usage_user_model_time ON usage_records (user_id, model, created_at DESC, id DESC);
CREATE INDEX usage_user_key_time ON usage_records (user_id, key_id, created_at DESC, id DESC);
CREATE INDEX usage_time ON usage_records (created_at);

CREATE TABLE email_tokens (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_user ON sessions (user_id);
