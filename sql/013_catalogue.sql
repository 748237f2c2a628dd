-- The catalogue saved by admins (issue 33). Each save is a new row; the newest is in force in
-- every gateway process (src/catalogue/stored.ts), and with none the GATEWAY_CONFIG file is.
-- The document is the catalogue file's JSON, plus what only the operator's side reads: models'
-- and routes' "enabled" (false takes them out of service) and routes' "upstream_pricing" (what
-- the upstream charges, USD per million tokens, for the margin).
CREATE TABLE catalogue_versions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  doc jsonb NOT NULL,
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
