// /api/admin/health and /api/admin/revenue: how the upstreams are doing (per route, the last
// five minutes and the last day, from every gateway process), and what the gateway earns
// (income, upstream cost, margin, deposits; per day and per model).

import { nanoToUsd } from '../billing/money.js';
import type { Reply } from '../dashboard/http.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { latestVersion, fileDocument } from '../catalogue/stored.js';
import { query } from './http.js';
import { RevenueQuery, type HealthT, type RevenueT } from './shapes.js';

interface HealthRow {
  route: string;
  attempts: bigint;
  errors: bigint;
  latency_ms_sum: bigint;
  latency_ms_max: number;
  cooldowns: bigint;
  cooling_until: Date | null;
  err_no_key: bigint;
  err_key_refused: bigint;
  err_timeout: bigint;
  err_connect: bigint;
  err_rate_limited: bigint;
  err_server: bigint;
  err_other: bigint;
}

const window = (r: HealthRow | undefined) => ({
  attempts: Number(r?.attempts ?? 0),
  errors: Number(r?.errors ?? 0),
  error_rate: r && r.attempts > 0n ? Number(r.errors) / Number(r.attempts) : 0,
  causes: {
    no_key: Number(r?.err_no_key ?? 0),
    key_refused: Number(r?.err_key_refused ?? 0),
    timeout: Number(r?.err_timeout ?? 0),
    connect: Number(r?.err_connect ?? 0),
    rate_limited: Number(r?.err_rate_limited ?? 0),
    server: Number(r?.err_server ?? 0),
    other: Number(r?.err_other ?? 0),
  },
  avg_latency_ms: r && r.attempts > 0n ? Math.round(Number(r.latency_ms_sum) / Number(r.attempts)) : null,
  max_latency_ms: r ? r.latency_ms_max : null,
  cooldowns: Number(r?.cooldowns ?? 0),
});

type Doc = {
  models: {
    id: string;
    enabled?: boolean;
    routes: {
      provider: string;
      model: string;
      enabled?: boolean;
      upstream_pricing?: { input: number; output?: number; cache_read?: number };
    }[];
  }[];
};

/** USD per million tokens as nano-USD per million tokens (exact for prices with up to 9 decimals). */
const perMillion = (usdPerMillion: number) => BigInt(Math.round(usdPerMillion * 1e9));

export function reportHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function health(): Promise<Reply> {
    const totals = (since: string) => sql<HealthRow[]>`
      SELECT route, sum(attempts)::bigint AS attempts, sum(errors)::bigint AS errors, sum(latency_ms_sum)::bigint AS latency_ms_sum,
             max(latency_ms_max) AS latency_ms_max, sum(cooldowns)::bigint AS cooldowns, max(cooling_until) AS cooling_until,
             sum(err_no_key)::bigint AS err_no_key, sum(err_key_refused)::bigint AS err_key_refused, sum(err_timeout)::bigint AS err_timeout,
             sum(err_connect)::bigint AS err_connect, sum(err_rate_limited)::bigint AS err_rate_limited, sum(err_server)::bigint AS err_server,
             sum(err_other)::bigint AS err_other
      FROM route_health WHERE minute > now() - ${since}::interval GROUP BY route`;
    const [now, day, hourly] = await Promise.all([
      totals('5 minutes'),
      totals('24 hours'),
      sql<{ route: string; hour: Date; attempts: bigint; errors: bigint; latency_ms_sum: bigint }[]>`
        SELECT route, date_trunc('hour', minute) AS hour, sum(attempts)::bigint AS attempts, sum(errors)::bigint AS errors, sum(latency_ms_sum)::bigint AS latency_ms_sum
        FROM route_health WHERE minute > now() - interval '24 hours' GROUP BY 1, 2 ORDER BY 1, 2`,
    ]);
    const inCatalogue = gw.catalogue.current.list.flatMap((m) => m.routes.map((r) => r.key));
    const routes = [...new Set([...inCatalogue, ...day.map((r) => r.route)])].sort();
    const byRoute = (rows: HealthRow[]) => new Map(rows.map((r) => [r.route, r]));
    const nowBy = byRoute(now);
    const dayBy = byRoute(day);
    const body: HealthT = {
      routes: routes.map((route) => {
        const until = dayBy.get(route)?.cooling_until;
        return {
          route,
          in_catalogue: inCatalogue.includes(route),
          cooling_until: until && until.getTime() > Date.now() ? until.toISOString() : null,
          now: window(nowBy.get(route)),
          day: window(dayBy.get(route)),
          hourly: hourly
            .filter((h) => h.route === route)
            .map((h) => ({
              hour: h.hour.toISOString(),
              attempts: Number(h.attempts),
              errors: Number(h.errors),
              avg_latency_ms: h.attempts > 0n ? Math.round(Number(h.latency_ms_sum) / Number(h.attempts)) : null,
            })),
        };
      }),
    };
    return { status: 200, body };
  }

  async function revenue(ex: Exchange): Promise<Reply> {
    const q = query(ex, RevenueQuery);
    const days = q.days ? Number(q.days) : 30;
    const [usage, deposits, latest] = await Promise.all([
      sql<
        {
          day: Date;
          model: string;
          requests: bigint;
          prompt_tokens: bigint;
          completion_tokens: bigint;
          cached_tokens: bigint;
          cost_nano: bigint;
        }[]
      >`
        SELECT day, model, sum(requests)::bigint AS requests, sum(prompt_tokens)::bigint AS prompt_tokens, sum(completion_tokens)::bigint AS completion_tokens,
               sum(cached_tokens)::bigint AS cached_tokens, sum(cost_nano)::bigint AS cost_nano
        FROM usage_model_daily WHERE day > (now() AT TIME ZONE 'UTC')::date - ${days}::int GROUP BY 1, 2 ORDER BY 1, 2`,
      // Whole UTC days, as the usage above (sql/033 keeps the per-day sums).
      sql<{ day: Date; method: string; n: bigint; credit_nano: bigint }[]>`
        SELECT day, method, deposits AS n, credit_nano
        FROM deposits_daily WHERE day > (now() AT TIME ZONE 'UTC')::date - ${days}::int AND deposits > 0 ORDER BY 1, 2`,
      latestVersion(sql),
    ]);
    // The upstream's price of each model's first route in service: usage records do not say
    // which route served a request (docs/api.md), so this is what the margin is computed with.
    const doc = (latest?.doc ?? fileDocument(gw.catalogue.configPath)) as Doc;
    const upstream = new Map<string, { input: bigint; output: bigint; cacheRead: bigint }>();
    for (const m of doc.models) {
      const p = m.routes.find((r) => r.enabled !== false)?.upstream_pricing;
      if (p)
        upstream.set(m.id, {
          input: perMillion(p.input),
          output: perMillion(p.output ?? 0),
          cacheRead: perMillion(p.cache_read ?? p.input),
        });
    }
    const costOf = (r: (typeof usage)[number]): bigint | null => {
      const p = upstream.get(r.model);
      if (!p) return null;
      return (
        ((r.prompt_tokens - r.cached_tokens) * p.input +
          r.cached_tokens * p.cacheRead +
          r.completion_tokens * p.output) /
        1_000_000n
      );
    };
    const dayTotals = new Map<string, { income: bigint; cost: bigint; priced: boolean; requests: bigint }>();
    const modelTotals = new Map<string, { income: bigint; cost: bigint | null; requests: bigint }>();
    for (const r of usage) {
      const cost = costOf(r);
      const day = r.day.toISOString().slice(0, 10);
      const d = dayTotals.get(day) ?? { income: 0n, cost: 0n, priced: true, requests: 0n };
      d.income += r.cost_nano;
      d.requests += r.requests;
      if (cost === null) d.priced = false;
      else d.cost += cost;
      dayTotals.set(day, d);
      const m = modelTotals.get(r.model) ?? { income: 0n, cost: 0n, requests: 0n };
      m.income += r.cost_nano;
      m.requests += r.requests;
      m.cost = cost === null || m.cost === null ? null : m.cost + cost;
      modelTotals.set(r.model, m);
    }
    const money = (income: bigint, cost: bigint | null) => ({
      income_usd: nanoToUsd(income),
      upstream_cost_usd: cost === null ? null : nanoToUsd(cost),
      margin_usd: cost === null ? null : nanoToUsd(income - cost),
    });
    const body: RevenueT = {
      days,
      per_day: [...dayTotals].map(([day, d]) => ({
        day,
        requests: Number(d.requests),
        ...money(d.income, d.priced ? d.cost : null),
      })),
      per_model: [...modelTotals].map(([model, m]) => ({
        model,
        requests: Number(m.requests),
        ...money(m.income, m.cost),
      })),
      deposits: deposits.map((d) => ({
        day: d.day.toISOString().slice(0, 10),
        method: d.method,
        count: Number(d.n),
        credited_usd: nanoToUsd(d.credit_nano),
      })),
    };
    return { status: 200, body };
  }

  return { health, revenue };
}
