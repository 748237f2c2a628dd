// Reserve before forwarding, settle after: the two hot-store round trips of a request.

import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { HotStore, ReserveResult } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { nanoToUsd } from './money.js';

export interface Reservation {
  id: string;
  userId: string;
  amount: bigint;
  settled: boolean;
}

export class Ledger {
  constructor(
    private readonly sql: Sql,
    private readonly hot: HotStore,
    private readonly ttlMs: number,
    /**
     * Runs before a balance is loaded from Postgres: the usage writer's flush, so that charges
     * this process has made but not yet written are in the figure it loads.
     */
    private readonly beforePrime: () => Promise<void> = async () => {},
  ) {}

  /** Hold `amount` or refuse with 402. A user seen for the first time is loaded from Postgres. */
  async reserve(userId: string, amount: bigint): Promise<Reservation> {
    const id = randomUUID();
    let result: ReserveResult;
    try {
      result = await this.hot.reserve(userId, id, amount, this.ttlMs);
      if (result.status === 'unknown') {
        await this.prime(userId);
        result = await this.hot.reserve(userId, id, amount, this.ttlMs);
      }
    } catch {
      // A store that cannot be reached is the gateway's trouble (503, readyz says which one),
      // not an internal error.
      throw new GatewayError('unavailable', 'The gateway cannot check balances right now; try again shortly.');
    }
    if (result.status !== 'ok') {
      throw new GatewayError(
        'insufficient_balance',
        `Insufficient balance: this request may cost up to $${nanoToUsd(amount)} but $${nanoToUsd(result.available < 0n ? 0n : result.available)} is available. Add funds or lower max_tokens.`,
      );
    }
    return { id, userId, amount, settled: false };
  }

  /** Charge the actual cost and release the rest; returns what was taken. Safe to call twice. */
  async settle(res: Reservation, cost: bigint): Promise<bigint> {
    if (res.settled) return 0n;
    res.settled = true;
    const { charged, known } = await this.hot.settle(res.userId, res.id, cost);
    return known ? charged : cost;
  }

  async prime(userId: string): Promise<void> {
    await this.beforePrime();
    const [row] = await this.sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${userId}`;
    await this.hot.primeBalance(userId, row ? row.balance_nano : 0n);
  }

  /** Balance, live reservations and what is available, loading the balance if needed. */
  async balance(userId: string): Promise<{ balance: bigint; reserved: bigint; available: bigint }> {
    let b = await this.hot.balance(userId);
    if (!b) {
      await this.prime(userId);
      b = (await this.hot.balance(userId)) ?? { balance: 0n, reserved: 0n };
    }
    return { ...b, available: b.balance - b.reserved };
  }
}
