// Service keys: `ar-` + 40 base62 characters from the CSPRNG. Only the SHA-256 is stored.
// Lookups are cached in process (short TTL) and in the hot store; a revocation is published
// so that every gateway process drops the key at once.

import { createHash, createHmac } from 'node:crypto';
import type { KeyLimits, SpendPeriod } from '../billing/key-limits.js';
import { snapshotColumns, snapshotOf, type SnapshotColumns } from '../billing/account-snapshot.js';
import type { Sql } from '../store/sql.js';
import { Batcher, Coalesced } from '../store/batch.js';
import { BoundedMap } from '../bounded-map.js';
import { base62Of, randomBase62 } from '../wire.js';
import type { AccountStore, Bus, PrimeSnapshot, SharedCache } from '../store/hot.js';

export const KEY_PREFIX = 'ar-';
const KEY_CHARS = 40;
const REVOKE_CHANNEL = 'key-revoked';
/** A key's limits changed: every process drops its cached identity (the key stays valid). */
const CHANGE_CHANNEL = 'key-changed';
const SHARED_CACHE_MS = 10 * 60_000;
/**
 * Written over a revoked key's shared cache entry. Lookups fill the cache only if it is empty
 * (SET NX), so a process that read Postgres just before the revocation committed cannot put
 * the key back for another ten minutes.
 */
const REVOKED = 'revoked';

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export function generateKey(): { key: string; hash: string; prefix: string } {
  const key = KEY_PREFIX + randomBase62(KEY_CHARS);
  return { key, hash: hashSecret(key), prefix: key.slice(0, KEY_PREFIX.length + 6) };
}

/**
 * The key whose secret is derived from `secret` and `id` (HMAC-SHA512): any process that holds
 * the secret can present it, and none has to keep it (the playground's, src/dashboard/playground.ts).
 */
export function derivedKey(secret: Buffer, id: string): { key: string; hash: string; prefix: string } {
  // 64 bytes for 40 characters: the skip leaves fewer only with a probability far below 1e-20.
  const key = KEY_PREFIX + base62Of(createHmac('sha512', secret).update(id).digest(), KEY_CHARS).padEnd(KEY_CHARS, '0');
  return { key, hash: hashSecret(key), prefix: key.slice(0, KEY_PREFIX.length + 6) };
}

export const looksLikeKey = (s: string): boolean =>
  s.startsWith(KEY_PREFIX) && s.length >= KEY_PREFIX.length + 32 && s.length <= 128;

export interface KeyIdentity {
  keyId: string;
  userId: string;
  limits: KeyLimits;
}

interface IdentityRow {
  id: string;
  user_id: string;
  rpm_limit: number | null;
  spend_limit_nano: bigint | null;
  spend_limit_period: SpendPeriod | null;
}

function identityOf(row: IdentityRow): KeyIdentity {
  return {
    keyId: row.id,
    userId: row.user_id,
    limits: {
      rpm: row.rpm_limit,
      spendNano: row.spend_limit_nano,
      spendPeriod: row.spend_limit_nano === null ? null : (row.spend_limit_period ?? 'total'),
    },
  };
}

/** The shared cache holds JSON: the spend cap travels as a string. */
const encodeIdentity = (i: KeyIdentity) =>
  JSON.stringify({ ...i, limits: { ...i.limits, spendNano: i.limits.spendNano?.toString() ?? null } });
function decodeIdentity(text: string): KeyIdentity {
  const o = JSON.parse(text);
  return { ...o, limits: { ...o.limits, spendNano: o.limits.spendNano === null ? null : BigInt(o.limits.spendNano) } };
}

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  rpm_limit: number | null;
  spend_limit_nano: bigint | null;
  spend_limit_period: SpendPeriod | null;
}

/** What a key's owner may change; an absent field is left as it is, null removes a limit. */
export interface KeyChanges {
  name?: string;
  rpm?: number | null;
  /** Cap and period go together: null removes the cap. */
  spend?: { nano: bigint; period: SpendPeriod } | null;
}

export async function createKey(
  sql: Sql,
  userId: string,
  name = '',
  limits: Omit<KeyChanges, 'name'> = {},
): Promise<KeyRow & { key: string }> {
  const { key, hash, prefix } = generateKey();
  const [row] = await sql<KeyRow[]>`
    INSERT INTO api_keys (user_id, name, key_hash, prefix, rpm_limit, spend_limit_nano, spend_limit_period)
    VALUES (${userId}, ${name}, ${hash}, ${prefix}, ${limits.rpm ?? null}, ${limits.spend?.nano ?? null}, ${limits.spend?.period ?? null})
    RETURNING id, name, prefix, created_at, last_used_at, revoked_at, rpm_limit, spend_limit_nano, spend_limit_period`;
  return { ...row, key };
}

/**
 * A key's last use, for a row `k` of api_keys: the later of its last record's time, which the
 * totals trigger keeps on the key's latest day in usage_key_daily (sql/042), and
 * api_keys.last_used_at (the uses recorded before that, no longer written).
 */
export const LAST_USED_SQL =
  'greatest(k.last_used_at, (SELECT d.last_at FROM usage_key_daily d WHERE d.key_id = k.id ORDER BY d.day DESC LIMIT 1))';

export function listKeys(sql: Sql, userId: string): Promise<KeyRow[]> {
  return sql<KeyRow[]>`
    SELECT id, name, prefix, created_at, ${sql.unsafe(LAST_USED_SQL)} AS last_used_at, revoked_at, rpm_limit, spend_limit_nano, spend_limit_period
    FROM api_keys k WHERE user_id = ${userId} AND NOT ephemeral ORDER BY created_at DESC, id`;
}

/**
 * How long an unknown key is remembered as unknown: a client retrying with a wrong key (or a
 * flood of made-up ones) costs a map lookup, not a Redis and a Postgres round trip each time.
 * Keys are random, so no key created later can be one that was looked up before it existed.
 */
const UNKNOWN_TTL_MS = 5_000;

export class KeyResolver {
  private readonly local: BoundedMap<string, { identity: KeyIdentity; expires: number }>;
  private readonly unknown: BoundedMap<string, number>;
  private readonly hashes: BoundedMap<string, string>;
  private readonly lookups = new Coalesced((hash) => this.lookup(hash));
  /**
   * Keys nobody has cached, read from Postgres together: a burst of new keys (a launch, a
   * restart behind a busy balancer) costs one query per event-loop turn, not one each, and
   * never queues the pool.
   */
  private readonly rows = new Batcher<string, IdentityRow | undefined>(async (hashes) => {
    const now = new Date();
    // The account's snapshot comes along: the request's next step loads the account of a key
    // never seen (the offer), and would otherwise read the same row again.
    const found = await this.sql<(IdentityRow & SnapshotColumns & { key_hash: string })[]>`
      SELECT k.key_hash, k.id, k.user_id, k.rpm_limit, k.spend_limit_nano, k.spend_limit_period,
             ${snapshotColumns(this.sql, now)} FROM api_keys k
      JOIN users u ON u.id = k.user_id AND u.disabled_at IS NULL
      WHERE k.key_hash = ANY(${hashes}::text[]) AND k.revoked_at IS NULL`;
    const byHash = new Map(found.map((r) => [r.key_hash, r]));
    if (this.offer) for (const r of found) this.offer(r.user_id, snapshotOf(r, now));
    return hashes.map((h) => byHash.get(h));
  });
  /** Revocations heard so far: a lookup that overlapped one must not cache what it read. */
  private revocations = 0;

  constructor(
    private readonly sql: Sql,
    private readonly hot: SharedCache & Bus & Pick<AccountStore, 'forgetBalance'>,
    private readonly ttlMs: number,
    /** Keys (and unknown keys) remembered in this process, each: KEY_CACHE_MAX. */
    max = 100_000,
    /** Takes the account snapshot a lookup read with the key (the ledger, to load the account from). */
    private readonly offer?: (userId: string, snapshot: PrimeSnapshot) => void,
  ) {
    this.local = new BoundedMap(max);
    this.unknown = new BoundedMap(max);
    this.hashes = new BoundedMap(max);
  }

  /** Listen for revocations from every process (this one included). */
  async start(): Promise<void> {
    const drop = (hash: string) => {
      this.revocations++;
      this.local.delete(hash);
      this.lookups.forget(hash);
      // A key of a re-enabled account must not stay remembered as unknown.
      this.unknown.delete(hash);
    };
    await this.hot.subscribe(REVOKE_CHANNEL, drop);
    await this.hot.subscribe(CHANGE_CHANNEL, drop);
  }

  async resolve(key: string): Promise<KeyIdentity | null> {
    if (!looksLikeKey(key)) return null;
    // A digest per request showed in profiles; the same few keys come back all the time.
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashSecret(key);
      this.hashes.set(key, hash);
    }
    const now = Date.now();
    const hit = this.local.get(hash);
    if (hit && hit.expires > now) return hit.identity;
    if ((this.unknown.get(hash) ?? 0) > now) return null;
    return this.lookups.call(hash);
  }

  /** The shared cache, else Postgres; what it finds is kept here for `ttlMs`. */
  private async lookup(hash: string): Promise<KeyIdentity | null> {
    const now = Date.now();
    const revocationsBefore = this.revocations;
    const cached = await this.hot.getCached(`key:${hash}`);
    if (cached === REVOKED) return this.rememberUnknown(hash, now);
    let identity: KeyIdentity | null = cached ? decodeIdentity(cached) : null;
    if (!identity) {
      const row = await this.rows.call(hash);
      if (!row) {
        this.local.delete(hash);
        return this.rememberUnknown(hash, now);
      }
      identity = identityOf(row);
      // Not waited for: the request's next store call (its balance) leaves in the same write.
      void this.hot
        .setCached(`key:${hash}`, encodeIdentity(identity), SHARED_CACHE_MS, { onlyIfAbsent: true })
        .catch(() => {});
    }
    if (this.ttlMs > 0 && this.revocations === revocationsBefore) {
      this.local.set(hash, { identity, expires: now + this.ttlMs });
    }
    return identity;
  }

  private rememberUnknown(hash: string, now: number): null {
    this.unknown.set(hash, now + UNKNOWN_TTL_MS);
    return null;
  }

  /** Revoke a key of this user; false when no such live key is theirs. */
  async revoke(userId: string, keyId: string): Promise<{ id: string; revoked_at: Date } | null> {
    const [row] = await this.sql<{ id: string; key_hash: string; revoked_at: Date }[]>`
      UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
      WHERE id = ${keyId} AND user_id = ${userId}
      RETURNING id, key_hash, revoked_at`;
    if (!row) return null;
    // This process stops honouring it now, not when its own pub/sub message comes back.
    this.revocations++;
    this.local.delete(row.key_hash);
    await this.hot.setCached(`key:${row.key_hash}`, REVOKED, SHARED_CACHE_MS);
    await this.hot.publish(REVOKE_CHANNEL, row.key_hash);
    return { id: row.id, revoked_at: row.revoked_at };
  }

  /**
   * Change a key of this user (name, limits); null when no such key is theirs. The key's new
   * limits hold in every process from the answer on.
   */
  async update(userId: string, keyId: string, changes: KeyChanges): Promise<KeyRow | null> {
    const setRpm = changes.rpm !== undefined;
    const setSpend = changes.spend !== undefined;
    // A cap's change is numbered in the account's row (users.limits_seq), in the same statement:
    // the account's loads tell by it whether their snapshot holds the change (prime.lua).
    const [row] = await this.sql<(KeyRow & { key_hash: string; limits_seq: bigint | null })[]>`
      WITH changed AS (
        UPDATE api_keys k SET
          name = coalesce(${changes.name ?? null}, name),
          rpm_limit = CASE WHEN ${setRpm} THEN ${changes.rpm ?? null}::integer ELSE rpm_limit END,
          spend_limit_nano = CASE WHEN ${setSpend} THEN ${changes.spend?.nano ?? null}::bigint ELSE spend_limit_nano END,
          spend_limit_period = CASE WHEN ${setSpend} THEN ${changes.spend?.period ?? null}::text ELSE spend_limit_period END
        WHERE id = ${keyId} AND user_id = ${userId}
        RETURNING id, name, prefix, created_at, ${this.sql.unsafe(LAST_USED_SQL)} AS last_used_at, revoked_at, rpm_limit, spend_limit_nano, spend_limit_period, key_hash
      ), u AS (
        UPDATE users SET limits_seq = limits_seq + 1
        WHERE id = ${userId} AND ${setSpend} AND EXISTS (SELECT 1 FROM changed)
        RETURNING limits_seq
      )
      SELECT changed.*, (SELECT limits_seq FROM u) AS limits_seq FROM changed`;
    if (!row) return null;
    if ((setRpm || setSpend) && row.revoked_at === null)
      await this.changed(row.key_hash, userId, row.limits_seq ?? undefined);
    const { key_hash: _, limits_seq: __, ...key } = row;
    return key;
  }

  /** After a key's limits changed in Postgres: every process reads them again. */
  async changed(keyHash: string, userId: string, limitsSeq?: bigint): Promise<void> {
    this.revocations++;
    this.local.delete(keyHash);
    await this.hot.deleteCached(`key:${keyHash}`);
    await this.hot.publish(CHANGE_CHANNEL, keyHash);
    // A lookup that read Postgres just before the change may still fill the shared cache with
    // the old limits after the delete above (it sets only if absent): delete once more, later.
    setTimeout(() => void this.hot.deleteCached(`key:${keyHash}`).catch(() => {}), 2000).unref();
    // The account carries capped keys' spend counters: loading it again picks up the new cap,
    // and a load from a snapshot read before the change is refused (limitsSeq). A change of the
    // rpm limit alone leaves the account be: nothing in it changed, and every drop without a
    // number let a load from a snapshot read before it in (one missing a charge acknowledged
    // into the dropped account meanwhile).
    if (limitsSeq !== undefined) await this.hot.forgetBalance(userId, limitsSeq);
  }
}

/**
 * After an account was disabled (blocked) or enabled in Postgres: its live keys stop, or may
 * resolve again, in every process. Blocking writes the revoked marker over each key's shared
 * cache entry (so a lookup racing the change cannot cache the key back, see REVOKED) and
 * publishes the revocation, which drops every process's own copy; unblocking removes the
 * marker, and the next lookup reads Postgres.
 */
export async function setUserKeysBlocked(
  sql: Sql,
  hot: SharedCache & Bus,
  userId: string,
  blocked: boolean,
): Promise<void> {
  const rows = await sql<
    { key_hash: string }[]
  >`SELECT key_hash FROM api_keys WHERE user_id = ${userId} AND revoked_at IS NULL`;
  for (const { key_hash } of rows) {
    if (blocked) {
      await hot.setCached(`key:${key_hash}`, REVOKED, SHARED_CACHE_MS);
      await hot.publish(REVOKE_CHANNEL, key_hash);
    } else {
      await hot.deleteCached(`key:${key_hash}`);
      await hot.publish(CHANGE_CHANNEL, key_hash);
    }
  }
}
