// GET /api/public/stats: a few numbers for a landing page, no authentication, nothing about
// any account. The totals come from usage_hourly (sql/002), kept by a trigger, so that the
// figures stay cheap however long usage_records grows; only the partial hour at the start of
// the rolling 24 h window is counted from the raw rows.

import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import type { Reply } from './http.js';
import type { PublicStatsT } from './shapes/usage.js';

export const PUBLIC_STATS_TTL_MS = 5_000;
const CACHE_KEY = 'public-stats:v1';

interface Figures {
  requests_24h: number;
  tokens_24h: number;
  requests_total: number;
  tokens_total: number;
}

async function compute(gw: Gateway): Promise<Figures> {
  const [row] = await gw.sql<
    { requests_24h: string; tokens_24h: string; requests_total: string; tokens_total: string }[]
  >`
    WITH edge AS (
      SELECT now() - interval '24 hours' AS since,
             date_bin('1 hour', now() - interval '24 hours', timestamptz '2000-01-01 00:00:00+00') + interval '1 hour' AS first_whole
    ),
    whole AS (
      SELECT coalesce(sum(h.requests), 0) AS requests, coalesce(sum(h.tokens), 0) AS tokens
      FROM usage_hourly h, edge WHERE h.hour >= edge.first_whole
    ),
    partial AS (
      SELECT count(*) AS requests, coalesce(sum(u.prompt_tokens::bigint + u.completion_tokens), 0) AS tokens
      FROM usage_records u, edge WHERE u.created_at >= edge.since AND u.created_at < edge.first_whole
    ),
    total AS (
      SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(tokens), 0) AS tokens FROM usage_hourly
    )
    SELECT (whole.requests + partial.requests)::text AS requests_24h, (whole.tokens + partial.tokens)::text AS tokens_24h,
           total.requests::text AS requests_total, total.tokens::text AS tokens_total
    FROM whole, partial, total`;
  return {
    requests_24h: Number(row.requests_24h),
    tokens_24h: Number(row.tokens_24h),
    requests_total: Number(row.requests_total),
    tokens_total: Number(row.tokens_total),
  };
}

export function publicStatsHandler(gw: Gateway) {
  return async function publicStats(_ex: Exchange): Promise<Reply> {
    let figures: Figures;
    const cached = await gw.hot.getCached(CACHE_KEY);
    if (cached) figures = JSON.parse(cached) as Figures;
    else {
      figures = await compute(gw);
      await gw.hot.setCached(CACHE_KEY, JSON.stringify(figures), PUBLIC_STATS_TTL_MS);
    }
    const body: PublicStatsT = {
      models: gw.catalogue.current.list.length,
      ...figures,
      uptime_s: Math.floor((Date.now() - gw.startedAt) / 1000),
    };
    return {
      status: 200,
      body,
      headers: { 'cache-control': `public, max-age=${PUBLIC_STATS_TTL_MS / 1000}` },
    };
  };
}
