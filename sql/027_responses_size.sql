-- What each stored response takes, in bytes of its JSON text: read before a GET sends it (the
-- key's share of unbilled work counts it) and summed for its user's quota
-- (RESPONSES_STORE_QUOTA_BYTES).
ALTER TABLE responses ADD COLUMN input_bytes bigint NOT NULL DEFAULT 0;
ALTER TABLE responses ADD COLUMN response_bytes bigint NOT NULL DEFAULT 0;
UPDATE responses SET input_bytes = octet_length(input::text), response_bytes = octet_length(response::text);
