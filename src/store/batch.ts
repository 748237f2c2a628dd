// Fewer trips to the stores. Calls made during one turn of the event loop go to the store
// together: one script call for all of them instead of one each, which is what the hot path's
// Redis cost is made of. And concurrent lookups of one thing share a single run (Coalesced).

const MAX_BATCH = 256;

/**
 * Batchers that share a Turn flush in one callback, inside `around`: a store can cork its
 * socket there, so that a turn's reserves and settles leave in one write instead of one each.
 */
export class Turn {
  private due: (() => void)[] = [];

  constructor(private readonly around: (flushAll: () => void) => void = (flushAll) => flushAll()) {}

  schedule(flush: () => void): void {
    // After the I/O callbacks of this turn: every request that arrived with them joins.
    if (this.due.push(flush) === 1) setImmediate(() => this.run());
  }

  private run(): void {
    const due = this.due;
    this.due = [];
    this.around(() => {
      for (const flush of due) flush();
    });
  }
}

export class Batcher<Req, Res> {
  private queue: { req: Req; resolve: (r: Res) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;
  private readonly flushNow = () => this.flush();

  constructor(
    private readonly run: (reqs: Req[]) => Promise<Res[]>,
    private readonly turn = new Turn(),
  ) {}

  call(req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        this.turn.schedule(this.flushNow);
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.queue;
    this.queue = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) {
      const part = all.slice(i, i + MAX_BATCH);
      this.run(part.map((p) => p.req)).then(
        (results) => part.forEach((p, j) => p.resolve(results[j]!)),
        (err) => part.forEach((p) => p.reject(err)),
      );
    }
  }
}

/**
 * Concurrent calls for the same key share one run: when a cold process (or a cache that just
 * expired) meets hundreds of requests for one key or one account at once, one store lookup
 * answers them all instead of one each. Nothing is kept once the run settles.
 */
export class Coalesced<V> {
  private readonly running = new Map<string, Promise<V>>();

  constructor(private readonly run: (key: string) => Promise<V>) {}

  call(key: string): Promise<V> {
    let p = this.running.get(key);
    if (p === undefined) {
      const mine: Promise<V> = this.run(key).finally(() => {
        if (this.running.get(key) === mine) this.running.delete(key);
      });
      this.running.set(key, (p = mine));
    }
    return p;
  }

  /** Calls from now on start a run of their own (what runs now may have read something stale). */
  forget(key: string): void {
    this.running.delete(key);
  }
}

/**
 * Where the current call's keys and arguments start in KEYS and ARGV: a call's n-th key is
 * `KEYS[ko + n]`. Zero in a script run for one call; batchedScript moves them along. Every
 * script that batchedScript runs defines these first, in its `shared` part.
 */
export const OFFSETS = `
local ko, ao = 0, 0
`;

/** The shape of a batched script's call (batchedScript). */
export interface BatchShape {
  /** Keys every item shares, once at the start of KEYS (an item's own follow). */
  head: number;
  /** Keys and arguments each item brings, in order, and values its body returns. */
  keys: number;
  args: number;
  answers: number;
}

/**
 * A Lua script written for one call, run for every item of a batch in one call: after the
 * `head` keys they share, each item brings `keys` keys and `args` arguments, in order, and its
 * body returns `answers` values (`return a, b`, not a table); the script's answer is all of
 * them in one flat list, item after item. `body` reads its item's keys and arguments as
 * `KEYS[ko + n]` and `ARGV[ao + n]` (OFFSETS), the shared ones as `KEYS[n]`. Offsets and a flat
 * answer rather than a KEYS, ARGV and answer table per item: building those tables cost more
 * than the rest of Lua's own work for an item. `shared` runs once per call, before the items:
 * what it defines (state read once, memos) the items share.
 */
export function batchedScript(shared: string, body: string, shape: BatchShape): string {
  if (!shared.includes(OFFSETS)) throw new Error('a batched script defines its offsets in its shared part (OFFSETS)');
  const { head, keys, args, answers } = shape;
  const names = Array.from({ length: answers }, (_, i) => `a${i + 1}`);
  return `${shared}
local function one()
${body}
end
local out = {}
for i = 0, (#KEYS - ${head}) / ${keys} - 1 do
  ko, ao = ${head} + i * ${keys}, i * ${args}
  local ${names.join(', ')} = one()
${names.map((n, j) => `  out[i * ${answers} + ${j + 1}] = ${n}`).join('\n')}
end
return out
`;
}
