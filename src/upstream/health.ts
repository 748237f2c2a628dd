// Upstream health per route: attempts, errors, time to the answer's head and cooldowns, counted
// in memory per minute by the route selector and added to Postgres every few seconds
// (sql/014_route_health.sql) by every gateway process, so that the admin's page shows all
// workers together, now and over a day.

import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';

/** Why an attempt failed (sql/035_providers.sql): each has its column in route_health. */
export const FAILURE_CAUSES = [
  'no_key',
  'key_refused',
  'timeout',
  'connect',
  'rate_limited',
  'server',
  'other',
] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];
type Causes = Record<FailureCause, number>;
const noCauses = (): Causes => ({
  no_key: 0,
  key_refused: 0,
  timeout: 0,
  connect: 0,
  rate_limited: 0,
  server: 0,
  other: 0,
});

interface Bucket {
  minute: number;
  route: string;
  attempts: number;
  errors: number;
  causes: Causes;
  latencySum: number;
  latencyMax: number;
  cooldowns: number;
  coolingUntil: number;
}

export const HEALTH_FLUSH_MS = 5_000;

export class RouteHealth {
  private buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  private bucket(route: string, now: number): Bucket {
    const minute = now - (now % 60_000);
    const k = `${minute}|${route}`;
    let b = this.buckets.get(k);
    if (!b) {
      b = {
        minute,
        route,
        attempts: 0,
        errors: 0,
        causes: noCauses(),
        latencySum: 0,
        latencyMax: 0,
        cooldowns: 0,
        coolingUntil: 0,
      };
      this.buckets.set(k, b);
    }
    return b;
  }

  /** One attempt on a route; `latencyMs` until its answer's head or its failure. */
  attempt(route: string, ok: boolean, latencyMs: number, cause: FailureCause = 'other'): void {
    const b = this.bucket(route, Date.now());
    b.attempts++;
    if (!ok) {
      b.errors++;
      b.causes[cause]++;
    }
    const ms = Math.max(0, Math.round(latencyMs));
    b.latencySum += ms;
    if (ms > b.latencyMax) b.latencyMax = ms;
  }

  /** An attempt already counted as working turned out a failure (a refusal read from the answer). */
  failedAfterAnswer(route: string, cause: FailureCause): void {
    const b = this.bucket(route, Date.now());
    b.errors++;
    b.causes[cause]++;
  }

  cooldown(route: string, until: number): void {
    const b = this.bucket(route, Date.now());
    b.cooldowns++;
    if (until > b.coolingUntil) b.coolingUntil = until;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), HEALTH_FLUSH_MS);
    this.timer.unref();
  }

  /** Adds what was counted since the last flush; kept for the next one if Postgres is away. */
  async flush(): Promise<void> {
    if (this.buckets.size === 0) return;
    const rows = [...this.buckets.values()];
    this.buckets = new Map();
    try {
      await this.sql`
        INSERT INTO route_health AS h (minute, route, attempts, errors, latency_ms_sum, latency_ms_max, cooldowns, cooling_until,
                                       err_no_key, err_key_refused, err_timeout, err_connect, err_rate_limited, err_server, err_other)
        SELECT to_timestamp(x.minute / 1000.0), x.route, x.attempts, x.errors, x.latency_sum, x.latency_max, x.cooldowns,
               CASE WHEN x.cooling_until > 0 THEN to_timestamp(x.cooling_until / 1000.0) END,
               x.no_key, x.key_refused, x.timeout, x.connect, x.rate_limited, x.server, x.other
        FROM jsonb_to_recordset(${this.sql.json(
          rows.map((r) => ({
            minute: r.minute,
            route: r.route,
            attempts: r.attempts,
            errors: r.errors,
            latency_sum: r.latencySum,
            latency_max: r.latencyMax,
            cooldowns: r.cooldowns,
            cooling_until: r.coolingUntil,
            ...r.causes,
          })) as never,
        )})
          AS x(minute bigint, route text, attempts bigint, errors bigint, latency_sum bigint, latency_max integer, cooldowns integer, cooling_until bigint,
               no_key bigint, key_refused bigint, timeout bigint, connect bigint, rate_limited bigint, server bigint, other bigint)
        ORDER BY 1, 2
        ON CONFLICT (minute, route) DO UPDATE SET
          attempts = h.attempts + EXCLUDED.attempts,
          errors = h.errors + EXCLUDED.errors,
          err_no_key = h.err_no_key + EXCLUDED.err_no_key,
          err_key_refused = h.err_key_refused + EXCLUDED.err_key_refused,
          err_timeout = h.err_timeout + EXCLUDED.err_timeout,
          err_connect = h.err_connect + EXCLUDED.err_connect,
          err_rate_limited = h.err_rate_limited + EXCLUDED.err_rate_limited,
          err_server = h.err_server + EXCLUDED.err_server,
          err_other = h.err_other + EXCLUDED.err_other,
          latency_ms_sum = h.latency_ms_sum + EXCLUDED.latency_ms_sum,
          latency_ms_max = greatest(h.latency_ms_max, EXCLUDED.latency_ms_max),
          cooldowns = h.cooldowns + EXCLUDED.cooldowns,
          cooling_until = greatest(h.cooling_until, EXCLUDED.cooling_until)`;
    } catch (err) {
      for (const r of rows) {
        const b = this.bucket(r.route, r.minute);
        b.attempts += r.attempts;
        b.errors += r.errors;
        for (const c of FAILURE_CAUSES) b.causes[c] += r.causes[c];
        b.latencySum += r.latencySum;
        b.latencyMax = Math.max(b.latencyMax, r.latencyMax);
        b.cooldowns += r.cooldowns;
        b.coolingUntil = Math.max(b.coolingUntil, r.coolingUntil);
      }
      this.log.warn({ err }, 'route health: could not write to Postgres; kept for the next flush');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
