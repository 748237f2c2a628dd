// Where the hot store's data lives in Redis, so that every script touches one slot of a Redis
// Cluster. A script that charges a user appends the usage record to the outbox in the same
// atomic step, so a user's keys and the outbox stream the user writes to must share a slot:
// users are spread over SHARDS outbox streams by a hash of their id, and each shard's hash tag
// is both the stream's and its users'. Its docs: docs/architecture.md, "Redis layout".

/**
 * Outbox streams, and so slots with money in them. Fixed for the life of the data: a user's
 * shard names their keys, so another count would lose every account and queued record (the
 * layout key refuses that). 16 spreads evenly over 2, 4, 8 or 16 masters, and well enough over 3
 * (6/5/5); each writer reads every shard.
 */
export const SHARDS = 16;

/** CRC16/XMODEM of a string's UTF-8 bytes: Redis Cluster's slot function (mod 16384). */
export function crc16(s: string): number {
  let crc = 0;
  for (const byte of Buffer.from(s, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot Redis Cluster puts a key in: its hash tag's, when it has a non-empty one. */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % 16384;
  }
  return crc16(key) % 16384;
}

/**
 * Each shard's hash tag: the first `s<i>.<n>` whose slot falls in the i-th sixteenth of the slot
 * space, so that a cluster whose masters split the slots evenly (as `redis-cli --cluster create`
 * does) gets an even share of shards on each. Found the same way on every process, for ever.
 */
export const SHARD_TAGS: readonly string[] = Array.from({ length: SHARDS }, (_, i) => {
  const width = 16384 / SHARDS;
  for (let n = 0; ; n++) {
    const tag = `s${i}.${n}`;
    if (Math.floor((crc16(tag) % 16384) / width) === i) return tag;
  }
});

/** FNV-1a of the user id: which shard holds the user. Stable across versions and processes. */
export function shardOf(userId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) {
    h ^= userId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % SHARDS;
}

export class RedisLayout {
  /** Each shard's outbox stream. */
  readonly outboxes: readonly string[];

  constructor(readonly prefix: string) {
    this.outboxes = SHARD_TAGS.map((tag) => `${prefix}{${tag}}:outbox`);
  }

  /** A user's base key: the scripts name the user's other keys from it (sweep.lua's `bind`). */
  userBase(userId: string): string {
    return `${this.prefix}{${SHARD_TAGS[shardOf(userId)]}}:u:${userId}`;
  }

  userKeys(userId: string) {
    const p = this.userBase(userId);
    return {
      acct: `${p}:acct`,
      res: `${p}:res`,
      resv: `${p}:resv`,
      fixed: `${p}:fixed`,
      late: `${p}:late`,
      credits: `${p}:credits`,
      limits: `${p}:limits`,
    };
  }

  outboxOf(userId: string): string {
    return this.outboxes[shardOf(userId)]!;
  }

  /** Each shard's mark that its data is still there (the loss watch, redis-watch.ts). */
  epoch(shard: number): string {
    return `${this.prefix}{${SHARD_TAGS[shard]}}:epoch`;
  }

  /** A loaded account's key, and back: what SCAN looks for when every account is wanted. */
  readonly accountPattern = (): string => `${this.prefix}{s*}:u:*:acct`;
  userOfAccount(key: string): string | undefined {
    const m = /^\{s\d+\.\d+\}:u:(.+):acct$/.exec(key.slice(this.prefix.length));
    return key.startsWith(this.prefix) && m ? m[1] : undefined;
  }

  /** A writer's heartbeat (one key, any slot). */
  writer(name: string): string {
    return `${this.prefix}writer:${name}`;
  }

  /** The cache, counters and channels: one key each, any slot. */
  cache(key: string): string {
    return `${this.prefix}c:${key}`;
  }
  hits(bucket: string): string {
    return `${this.prefix}h:${bucket}`;
  }
  channel(name: string): string {
    return `${this.prefix}${name}`;
  }

  // ---- the layout before shards (one `outbox` stream, users tagged by their own id) ----

  /** Its stream: a Redis that still has it was used by an older version (redis-legacy.ts). */
  get legacyOutbox(): string {
    return `${this.prefix}outbox`;
  }
  legacyUserKeys(userId: string) {
    const p = `${this.prefix}{${userId}}`;
    return { acct: `${p}:acct`, fixed: `${p}:fixed`, late: `${p}:late` };
  }
  /** A key of that layout's users, or its epoch: what is dropped once its outbox is drained. */
  isLegacyKey(key: string): boolean {
    if (!key.startsWith(this.prefix)) return false;
    const rest = key.slice(this.prefix.length);
    return rest === 'epoch' || (rest.startsWith('{') && !/^\{s\d+\.\d+\}/.test(rest));
  }
}
