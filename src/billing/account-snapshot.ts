// What loading an account reads from Postgres: the balance, the running total of committed
// charges (which tells the outbox's acknowledgements what the snapshot already holds), the count
// of credits and of cap changes (which tell the same of credits and caps racing the load,
// credit.lua and prime.lua) and the
// current-period spend of each capped key, as columns of `users u` in one statement, so that
// they come from one snapshot without a transaction's extra round trips. Two statements read
// them: the account's own load (balances.ts) and a new key's lookup (accounts/keys.ts), which
// saves a key never seen its second round trip.

import type { PrimeSnapshot } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { periodEnd, periodStart, spendField, type SpendPeriod } from './key-limits.js';

export interface SnapshotColumns {
  balance_nano: bigint;
  charged_nano: bigint;
  credit_seq: bigint;
  limits_seq: bigint;
  caps: { id: string; period: SpendPeriod; spent: string }[];
}

/** The snapshot's columns of the row `u` of users, as at `now`. */
export function snapshotColumns(sql: Sql, now: Date) {
  // Each capped key's spend in its current period, from the per-key daily totals (kept with
  // the records, sql/029): a period starts and ends at a UTC midnight, so whole days sum it
  // exactly. One sum per period, each between constant bounds: the table is partitioned by month
  // (sql/043), and only constants let the planner leave out the months outside the period (and
  // the DEFAULT partition, once the period lies within made months).
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const spent = (period: SpendPeriod) =>
    sql`(SELECT sum(d.cost_nano) FROM usage_key_daily d WHERE d.key_id = k.id
         AND d.day >= ${day(periodStart(period, now))}::date AND d.day < ${day(periodEnd(period, now)!)}::date)`;
  return sql`u.balance_nano, u.charged_nano, u.credit_seq, u.limits_seq,
    coalesce((SELECT json_agg(json_build_object('id', k.id, 'period', k.spend_limit_period, 'spent',
        coalesce(CASE k.spend_limit_period WHEN 'day' THEN ${spent('day')} WHEN 'week' THEN ${spent('week')}
          WHEN 'month' THEN ${spent('month')} ELSE (SELECT sum(d.cost_nano) FROM usage_key_daily d WHERE d.key_id = k.id) END, 0)::text))
      FROM api_keys k WHERE k.user_id = u.id AND k.spend_limit_nano IS NOT NULL AND k.spend_limit_period IS NOT NULL), '[]'::json) AS caps`;
}

/** The snapshot those columns make (an account that is not there: nothing, as a new one). */
export function snapshotOf(row: SnapshotColumns | undefined, now: Date): PrimeSnapshot {
  const keySpend: Record<string, bigint> = {};
  for (const k of row?.caps ?? []) keySpend[spendField(k.id, k.period, now)] = BigInt(k.spent);
  return {
    balance: row?.balance_nano ?? 0n,
    charged: row?.charged_nano ?? 0n,
    keySpend,
    creditSeq: row?.credit_seq ?? 0n,
    limitsSeq: row?.limits_seq ?? 0n,
  };
}
