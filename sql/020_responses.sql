-- Stored answers of the Responses surface (`store`, the default): what `previous_response_id`
-- continues from, and what GET /v1/responses/{id} returns. Each row holds the whole input the
-- answer saw (its history included), so a continuation is one row read, whatever the chain's
-- length. Rows live RESPONSES_TTL_DAYS.
CREATE TABLE responses (
  id text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  model text NOT NULL,
  -- The provider that answered, and whether that vendor kept the answer too: a continuation on
  -- the same Responses provider can then name it instead of replaying the history.
  provider text NOT NULL,
  upstream_stored boolean NOT NULL DEFAULT false,
  input jsonb NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX responses_user ON responses (user_id, created_at);
CREATE INDEX responses_expiry ON responses (expires_at);
