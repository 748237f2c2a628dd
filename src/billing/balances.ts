// A user's hot account, loaded ("primed") from Postgres the first time it is needed, and its
// balance as a request sees it. Loads are shared: many requests meeting one cold account load it
// once, and the cold accounts of one event-loop turn are read in one statement.

import { Batcher, Coalesced } from '../store/batch.js';
import type { AccountStore, HotBalance, PrimeSnapshot } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { periodStart, spendField, type SpendPeriod } from './key-limits.js';
import type { Leases } from './leases.js';

const KNOWN_MAX = 100_000;

export class Balances {
  /** Users this process has asked the hot store about (at most KNOWN_MAX, then forgotten at once). */
  private readonly known = new Set<string>();
  /** A cold account met by many requests at once is loaded once for all of them. */
  private readonly priming = new Coalesced(async (userId) =>
    this.hot.primeBalance(userId, await this.snapshots.call(userId)),
  );
  /** Cold accounts met in one event-loop turn are read in one snapshot (a burst of new users). */
  private readonly snapshots = new Batcher<string, PrimeSnapshot>((userIds) => this.load(userIds));

  constructor(
    private readonly sql: Sql,
    private readonly hot: AccountStore,
    /** The ledger's leases: what this process's lease holds undrawn is available, not reserved. */
    private readonly leases?: Leases,
  ) {}

  /** Loads the account from Postgres if it is not loaded: what it loaded, or null if it was. */
  prime(userId: string): Promise<HotBalance | null> {
    return this.priming.call(userId);
  }

  /**
   * Load a user's account from one Postgres snapshot: the balance, the running total of
   * committed charges (which tells the outbox's acknowledgements what the snapshot already
   * holds) and the current-period spend of each capped key.
   */
  private async load(userIds: string[]): Promise<PrimeSnapshot[]> {
    const now = new Date();
    // Each capped key's spend in its current period, from the per-key daily totals (kept with
    // the records, sql/029): a period starts at a UTC midnight, so whole days sum it exactly.
    const start = (period: SpendPeriod) => periodStart(period, now).toISOString().slice(0, 10);
    // One statement, so one snapshot for the balance, the charged total and the caps' spend,
    // without a transaction's three extra round trips.
    const rows = await this.sql<
      {
        id: string;
        balance_nano: bigint;
        charged_nano: bigint;
        caps: { id: string; period: SpendPeriod; spent: string }[];
      }[]
    >`
      SELECT u.id, u.balance_nano, u.charged_nano,
             coalesce((SELECT json_agg(json_build_object('id', k.id, 'period', k.spend_limit_period, 'spent',
                 coalesce((SELECT sum(d.cost_nano) FROM usage_key_daily d WHERE d.key_id = k.id AND d.day >= (CASE k.spend_limit_period
                   WHEN 'day' THEN ${start('day')} WHEN 'week' THEN ${start('week')} WHEN 'month' THEN ${start('month')} ELSE ${start('total')} END)::date), 0)::text))
               FROM api_keys k WHERE k.user_id = u.id AND k.spend_limit_nano IS NOT NULL AND k.spend_limit_period IS NOT NULL), '[]'::json) AS caps
      FROM users u WHERE u.id = ANY(${userIds}::uuid[])`;
    const byUser = new Map(rows.map((u) => [u.id, u]));
    return userIds.map((id) => {
      const u = byUser.get(id);
      const keySpend: Record<string, bigint> = {};
      for (const k of u?.caps ?? []) keySpend[spendField(k.id, k.period, now)] = BigInt(k.spent);
      return { balance: u?.balance_nano ?? 0n, charged: u?.charged_nano ?? 0n, keySpend };
    });
  }

  /**
   * Balance, live reservations and what is available, loading the account if needed. What this
   * process's lease holds undrawn is available here, not reserved (the leases of other processes
   * count as reserved until they are handed back, a window after their last request).
   */
  async balance(userId: string): Promise<{ balance: bigint; reserved: bigint; available: bigint }> {
    // A user this process has not met is loaded first: usually nobody has (a new key, a burst of
    // them), and the load answers the balance, a read less. An account loaded already costs a
    // snapshot read here, once per process.
    if (!this.known.has(userId)) {
      if (this.known.size >= KNOWN_MAX) this.known.clear();
      this.known.add(userId);
      const loaded = await this.prime(userId);
      if (loaded && loaded.reserved === 0n) return this.available(userId, loaded);
    }
    let b = await this.hot.balance(userId);
    if (!b) {
      // What the load found is the balance, unless holds are counted (expired ones are swept by
      // the read) or another process loaded it first: a read less for a new account.
      const loaded = await this.prime(userId);
      b =
        loaded && loaded.reserved === 0n ? loaded : ((await this.hot.balance(userId)) ?? { balance: 0n, reserved: 0n });
    }
    return this.available(userId, b);
  }

  private available(userId: string, b: HotBalance) {
    const undrawn = this.leases?.undrawn(userId) ?? 0n;
    const reserved = b.reserved > undrawn ? b.reserved - undrawn : 0n;
    return { balance: b.balance, reserved, available: b.balance - reserved };
  }
}
