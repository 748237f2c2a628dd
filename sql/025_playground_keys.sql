-- Keys the dashboard's playground mints for one request and revokes after it: never shown to
-- anyone, left out of the key list and of the live-key count.
ALTER TABLE api_keys ADD COLUMN ephemeral boolean NOT NULL DEFAULT false;
