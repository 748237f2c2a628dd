-- Upstream health per route and minute (src/upstream/health.ts): each gateway process adds its
-- counts every few seconds, so the admin's health page reads a few hundred rows for a day.
CREATE TABLE route_health (
  minute timestamptz NOT NULL,
  route text NOT NULL,
  attempts bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  latency_ms_sum bigint NOT NULL DEFAULT 0,
  latency_ms_max integer NOT NULL DEFAULT 0,
  cooldowns integer NOT NULL DEFAULT 0,
  -- The latest end of a cooldown started in this minute.
  cooling_until timestamptz,
  PRIMARY KEY (minute, route)
);
CREATE INDEX route_health_route ON route_health (route, minute DESC);
