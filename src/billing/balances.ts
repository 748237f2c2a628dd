// A user's hot account, loaded ("primed") from Postgres the first time it is needed, and its
// balance as a request sees it. Loads are shared: many requests meeting one cold account load it
// once, and the cold accounts of one event-loop turn are read in one statement.

import { Batcher, Coalesced } from '../store/batch.js';
import type { AccountStore, HotBalance, PrimeSnapshot } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { snapshotColumns, snapshotOf, type SnapshotColumns } from './account-snapshot.js';
import type { Leases } from './leases.js';

const KNOWN_MAX = 100_000;
/** How long a snapshot read with a key's lookup waits for the account's load to take it. */
const OFFER_MS = 1_000;

export class Balances {
  /** Users this process has asked the hot store about (at most KNOWN_MAX, then forgotten at once). */
  private readonly known = new Set<string>();
  /** A cold account met by many requests at once is loaded once for all of them. */
  private readonly priming = new Coalesced(async (userId): Promise<HotBalance | null> => {
    let loaded = await this.hot.primeBalance(userId, this.takeOffered(userId) ?? (await this.snapshots.call(userId)));
    // A spend cap changed after the snapshot was read (forgetBalance marked it): read again. A
    // snapshot read after the mark holds the change, so one more read is all it takes.
    for (let tries = 1; loaded === 'stale'; tries++) {
      if (tries === 3) throw new Error(`the account of ${userId} kept changing while it was loaded`);
      loaded = await this.hot.primeBalance(userId, await this.snapshots.call(userId));
    }
    return loaded;
  });
  /**
   * Snapshots read with a new key's lookup (accounts/keys.ts), which the load of its account
   * takes instead of reading Postgres again: a key never seen costs one round trip, not two.
   * Each is taken once and only while fresh, so it is no older than a load's own would be by
   * more than the request's first steps. (Charges committed since the snapshot are taken at
   * the load either way: its charged total tells them, prime.lua.)
   */
  private readonly offered = new Map<string, { snapshot: PrimeSnapshot; until: number }>();
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

  /** A snapshot of the account of a key just looked up, for its load (kept only for a user not met yet). */
  offer(userId: string, snapshot: PrimeSnapshot): void {
    if (this.known.has(userId)) return;
    // Lookups whose request never loads the account (it failed first) leave theirs behind.
    if (this.offered.size >= KNOWN_MAX) this.offered.clear();
    this.offered.set(userId, { snapshot, until: Date.now() + OFFER_MS });
  }

  private takeOffered(userId: string): PrimeSnapshot | undefined {
    const o = this.offered.get(userId);
    if (!o) return undefined;
    this.offered.delete(userId);
    return o.until >= Date.now() ? o.snapshot : undefined;
  }

  /** Each account from one Postgres snapshot (account-snapshot.ts). */
  private async load(userIds: string[]): Promise<PrimeSnapshot[]> {
    const now = new Date();
    const rows = await this.sql<({ id: string } & SnapshotColumns)[]>`
      SELECT u.id, ${snapshotColumns(this.sql, now)} FROM users u WHERE u.id = ANY(${userIds}::uuid[])`;
    const byUser = new Map(rows.map((u) => [u.id, u]));
    return userIds.map((id) => snapshotOf(byUser.get(id), now));
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
