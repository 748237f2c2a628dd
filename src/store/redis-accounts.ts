// The money in Redis: reserve, lease and settle, an account's load (prime), credit, balance and
// gate. Each is one Lua script on the user's keys and the outbox shard they write to, so it is
// atomic, one round trip, and in one slot. Reserve, lease and settle are the hot path: a turn's
// calls of each go to Redis as one script call (batch.ts), in the turn's one write.

import { randomUUID } from 'node:crypto';
import {
  LOAD_RACE_MEMORY_MS,
  encodeRecord,
  LEASE_SHARE,
  SETTLED_MEMORY_MS,
  type AccountStore,
  type HotBalance,
  type LeaseRequest,
  type LeaseResult,
  type PrimeSnapshot,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type SettleResult,
} from './hot.js';
import { Batcher, batchedScript, OFFSETS, type Turn } from './batch.js';
import { luaScript, type LuaCommand } from './lua.js';
import type { RedisClient } from './redis-connect.js';
import { shardOf, slotOf, type RedisLayout } from './redis-layout.js';
import type { LossWatch } from './redis-watch.js';

// A batched script's shared part (batch.ts) runs once per call, its body once per item.
const HELPERS = ['neg', 'sweep'];
export const ACCOUNT_COMMANDS: Record<string, LuaCommand> = {
  arReserve: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'rpm', 'outbox-len']), luaScript(['reserve']), {
      head: 0,
      keys: 2,
      args: 8,
      answers: 2,
    }),
  },
  arSettle: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'settle-memo']), luaScript(['settle']), {
      head: 0,
      keys: 2,
      args: 8,
      answers: 4,
    }),
  },
  arLease: {
    lua: batchedScript(OFFSETS + luaScript([...HELPERS, 'outbox-len']), luaScript(['lease'], { LEASE_SHARE }), {
      head: 0,
      keys: 2,
      args: 7,
      answers: 2,
    }),
  },
  arPrime: {
    lua: batchedScript(OFFSETS + luaScript(['neg']), luaScript(['prime']), { head: 0, keys: 6, args: 6, answers: 2 }),
  },
  arBalance: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'balance']) },
  arGate: { numberOfKeys: 1, lua: luaScript([...HELPERS, 'rpm', 'gate']) },
  arCredit: { numberOfKeys: 2, lua: luaScript(['credit']) },
  arForget: { numberOfKeys: 2, lua: luaScript(['forget']) },
};

export type AccountScripts = {
  arReserve(...args: string[]): Promise<(number | string)[]>;
  arSettle(...args: string[]): Promise<(number | string)[]>;
  arLease(...args: string[]): Promise<(number | string)[]>;
  arPrime(...args: string[]): Promise<(string | null)[]>;
  arBalance(...args: string[]): Promise<[string, string] | null>;
  arGate(...args: string[]): Promise<[number, number]>;
  arCredit(...args: string[]): Promise<number | null>;
  arForget(...args: string[]): Promise<null>;
};

interface ScriptCall {
  keys: string[];
  args: string[];
}

/** A batch of calls as one script call: the key count, each call's keys, then their arguments. */
function joinCalls(calls: ScriptCall[]): string[] {
  const keys: string[] = [];
  const args: string[] = [];
  for (const c of calls) {
    keys.push(...c.keys);
    args.push(...c.args);
  }
  return [String(keys.length), ...keys, ...args];
}

/** A batched script's flat answer (batchedScript), as one tuple of `width` values per call. */
function answersOf<T>(flat: T[], width: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < flat.length; i += width) out.push(flat.slice(i, i + width));
  return out;
}

/**
 * Runs a batch of calls as few script calls as the store allows: one on a single server; on a
 * cluster one per slot (a script's keys must share one), sent together and answered in order.
 */
function bySlot<T>(clustered: boolean, calls: ScriptCall[], run: (calls: ScriptCall[]) => Promise<T[]>): Promise<T[]> {
  if (!clustered) return run(calls);
  const groups = new Map<number, number[]>();
  calls.forEach((c, i) => {
    const slot = slotOf(c.keys[0]!);
    let g = groups.get(slot);
    if (!g) groups.set(slot, (g = []));
    g.push(i);
  });
  if (groups.size === 1) return run(calls);
  const out = new Array<T>(calls.length);
  return Promise.all(
    [...groups.values()].map(async (idx) => {
      const answers = await run(idx.map((i) => calls[i]!));
      idx.forEach((i, j) => (out[i] = answers[j]!));
    }),
  ).then(() => out);
}

export class RedisAccounts implements AccountStore {
  readonly durableSettle = true;
  private readonly reserves: Batcher<ScriptCall, [number, number]>;
  private readonly settles: Batcher<ScriptCall, [number, string, string, number]>;
  private readonly leases: Batcher<ScriptCall, [number, number]>;
  private readonly primes: Batcher<ScriptCall, [string | null, string | null]>;

  constructor(
    private readonly redis: RedisClient & AccountScripts,
    private readonly layout: RedisLayout,
    private readonly clustered: boolean,
    /** The store's turn: a turn's reserves, settles and leases leave in its one write. */
    turn: Turn,
    /** The cold path's commands (a load, a balance), sent with the turn's other calls. */
    private readonly inTurn: Batcher<() => Promise<unknown>, unknown>,
    /**
     * Settles this process made that the writers have not acknowledged yet, for the day Redis
     * loses its data (redis-watch.ts).
     */
    private readonly loss: Pick<LossWatch, 'keep'>,
  ) {
    this.reserves = new Batcher<ScriptCall, [number, number]>(
      (calls) =>
        bySlot(this.clustered, calls, (part) =>
          this.redis.arReserve(...joinCalls(part)).then((flat) => answersOf(flat, 2) as [number, number][]),
        ),
      turn,
    );
    this.settles = new Batcher<ScriptCall, [number, string, string, number]>(
      (calls) =>
        bySlot(this.clustered, calls, (part) =>
          this.redis
            .arSettle(...joinCalls(part))
            .then((flat) => answersOf(flat, 4) as [number, string, string, number][]),
        ),
      turn,
    );
    this.leases = new Batcher<ScriptCall, [number, number]>(
      (calls) =>
        bySlot(this.clustered, calls, (part) =>
          this.redis.arLease(...joinCalls(part)).then((flat) => answersOf(flat, 2) as [number, number][]),
        ),
      turn,
    );
    // A burst of keys never seen loads an account each: one script call for a turn's loads.
    this.primes = new Batcher<ScriptCall, [string | null, string | null]>(
      (calls) =>
        bySlot(this.clustered, calls, (part) =>
          this.redis.arPrime(...joinCalls(part)).then((flat) => answersOf(flat, 2) as [string | null, string | null][]),
        ),
      turn,
    );
  }

  /** A call's keys: the user's base key and the outbox shard it writes to (one slot). */
  private userCall(userId: string): string[] {
    return [this.layout.userBase(userId), this.layout.outboxOf(userId)];
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const [code, value] = await this.reserves.call({
      keys: this.userCall(req.userId),
      args: [
        req.reservationId,
        req.amount.toString(),
        String(req.ttlMs),
        req.keyId,
        String(req.rpmLimit),
        req.spend ? req.spend.limit.toString() : '-1',
        req.spend?.field ?? '',
        String(req.outboxMax),
      ],
    });
    switch (code) {
      case 1:
        return { status: 'ok', available: BigInt(value) };
      case 0:
        return { status: 'insufficient', available: BigInt(value) };
      case -1:
        return { status: 'unknown' };
      case -2:
        return { status: 'rate_limited', retryAfterMs: Number(value) };
      case -4:
        return { status: 'key_limit', spent: BigInt(value) };
      default:
        return { status: 'backlog' };
    }
  }

  async lease(req: LeaseRequest): Promise<LeaseResult> {
    const [code, value] = await this.leases.call({
      keys: this.userCall(req.userId),
      args: [
        req.leaseId,
        req.mode,
        req.need.toString(),
        req.grow.toString(),
        req.give.toString(),
        String(req.ttlMs),
        String(req.outboxMax),
      ],
    });
    switch (code) {
      case 1:
        return { status: 'ok', granted: BigInt(value) };
      case 0:
        return { status: 'insufficient', available: BigInt(value) };
      case -1:
        return { status: 'unknown' };
      case -5:
        return { status: 'gone' };
      default:
        return { status: 'backlog' };
    }
  }

  async settle(req: SettleRequest): Promise<SettleResult> {
    if (!req.record && req.cost !== 0n) throw new Error('a charge needs its usage record');
    const result = await this.runSettle(req);
    // A repeat's entry too: its first call's answer never came back, so nothing kept it.
    if (result.entryId) this.loss.keep(shardOf(req.userId), result.entryId, req);
    return result;
  }

  /** The settle itself, without keeping it for the loss watch: what the watch settles again with. */
  async runSettle(req: SettleRequest): Promise<SettleResult> {
    const [ok, entryId, , taken] = await this.settles.call({
      keys: this.userCall(req.userId),
      args: [
        req.reservationId,
        req.cost.toString(),
        String(SETTLED_MEMORY_MS),
        req.userId,
        req.spendField ?? '',
        req.spendFieldBefore ?? '',
        req.record ? encodeRecord(req.record) : '',
        req.leaseId ?? '',
      ],
    });
    if (ok !== 1) return entryId ? { duplicate: true, entryId } : { duplicate: true };
    const result: SettleResult = { duplicate: false, entryId: entryId || undefined };
    if (req.leaseId) {
      if (taken === -1) result.leaseGone = true;
      else result.leaseTaken = BigInt(taken);
    }
    return result;
  }

  async whenCommitted(): Promise<void> {
    // Durable once appended (see durableSettle).
  }

  async primeBalance(userId: string, s: PrimeSnapshot): Promise<HotBalance | null | 'stale'> {
    const fields: string[] = [];
    for (const [f, v] of Object.entries(s.keySpend)) fields.push(f, v.toString());
    const k = this.layout.userKeys(userId);
    const [balance, reserved] = await this.primes.call({
      keys: [k.acct, k.fixed, k.late, k.resv, k.credits, k.limits],
      args: [
        s.balance.toString(),
        s.charged.toString(),
        randomUUID(),
        fields.join('\n'),
        s.creditSeq.toString(),
        s.limitsSeq.toString(),
      ],
    });
    if (reserved === 'stale') return 'stale';
    return balance === null || reserved === null ? null : { balance: BigInt(balance), reserved: BigInt(reserved) };
  }

  async credit(userId: string, amount: bigint, seq: bigint): Promise<void> {
    const k = this.layout.userKeys(userId);
    await this.redis.arCredit(k.acct, k.credits, amount.toString(), seq.toString(), String(LOAD_RACE_MEMORY_MS));
  }

  async balance(userId: string) {
    const r = (await this.inTurn.call(() => this.redis.arBalance(this.layout.userBase(userId)))) as string[] | null;
    return r ? { balance: BigInt(r[0]), reserved: BigInt(r[1]) } : null;
  }

  async forgetBalance(userId: string, limitsSeq?: bigint): Promise<void> {
    const k = this.layout.userKeys(userId);
    await this.redis.arForget(k.acct, k.limits, limitsSeq?.toString() ?? '', String(LOAD_RACE_MEMORY_MS));
  }

  async gate(userId: string, keyId: string, rpmLimit: number) {
    const [code, value] = await this.redis.arGate(this.layout.userBase(userId), keyId, String(rpmLimit));
    if (code === 1) return 'ok' as const;
    if (code === 0) return 'insufficient' as const;
    if (code === -1) return 'unknown' as const;
    return { retryAfterMs: Number(value) };
  }
}
