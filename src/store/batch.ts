// Calls made during one turn of the event loop go to the store together: one script call for
// all of them instead of one each, which is what the hot path's Redis cost is made of.

const MAX_BATCH = 256;

export class Batcher<Req, Res> {
  private queue: { req: Req; resolve: (r: Res) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(private readonly run: (reqs: Req[]) => Promise<Res[]>) {}

  call(req: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O callbacks of this turn: every request that arrived with them joins.
        setImmediate(() => this.flush());
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
 * A Lua script written for one call, run for every item of a batch in one call: each item
 * brings `keys` keys and `args` arguments, in order; the answer is the list of the answers.
 * Inside `body`, KEYS and ARGV are the item's own, so a single-call script runs unchanged.
 * `shared` runs once per call, before the items: what it defines (state read once, memos)
 * the items share.
 */
export function batchedScript(shared: string, body: string, keys: number, args: number): string {
  return `${shared}
local function one(KEYS, ARGV)
${body}
end
local out = {}
for i = 0, #KEYS / ${keys} - 1 do
  local k, a = {}, {}
  for j = 1, ${keys} do k[j] = KEYS[i * ${keys} + j] end
  for j = 1, ${args} do a[j] = ARGV[i * ${args} + j] end
  out[i + 1] = one(k, a)
end
return out
`;
}
