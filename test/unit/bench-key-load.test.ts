// bench:data's loops in slices (bench/lib/key-load.ts): a loop that takes turns with another
// goes on where it stopped (a new key stays new), and its figures add up over its slices.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KeyLoadRun } from '../../bench/lib/key-load.js';
import { keyRuns } from '../../bench/lib/data-keys.js';

t.test('slices go on where the last stopped, and add up', async (t) => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let clock = 0;
  const run = new KeyLoadRun({
    url,
    model: 'm',
    what: 'new keys',
    connections: 4,
    keys: 1_000_000,
    secretOf: (i) => `k${i}`,
    cpu: () => ({ load: (clock += 0.5) }),
  });
  await run.run(0.3);
  const first = seen.length;
  await run.run(0.3);
  const r = run.result();
  t.ok(first > 0 && seen.length > first, `both slices sent requests (${first}, ${seen.length - first})`);
  t.equal(new Set(seen).size, seen.length, 'no key presented twice: the second slice went on from the first');
  t.equal(r.requests, seen.length, 'requests over both slices');
  t.equal(r.sliceRps?.length, 2, 'one rate a slice');
  t.ok(r.seconds >= 0.6 && r.seconds < 2, `seconds over both slices (${r.seconds})`);
  // Each slice read the clock before and after: 0.5 s a slice, over all requests.
  t.equal(r.cpuUsPerRequest?.load, Math.round(1e6 / r.requests), 'CPU added over the slices, a request');
});

t.test('the ratio in all, and turn by turn', async (t) => {
  const load = (rps: number, sliceRps: number[]) => ({
    what: '',
    connections: 1,
    requests: 0,
    keys: 0,
    seconds: 0,
    rps,
    latency: { count: 0 } as never,
    failures: {},
    sliceRps,
  });
  const k = keyRuns(load(0, []), load(1000, [900, 1100]), load(480, [450, 520]));
  t.equal(k.ratio, 0.48);
  t.same(k.turnRatios, [0.5, 0.473]);
});

t.test('a burst times its first wave apart: the first request of each connection', async (t) => {
  // The server holds the first four requests until all four have come (a cold process's first
  // wave), then answers at once: the first wave is slow and everything after it is quick.
  let held: (() => void)[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = () => res.end('{}');
      if (++seen > 4) return answer();
      held.push(answer);
      if (held.length === 4) setTimeout(() => (held.forEach((a) => a()), (held = [])), 150);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const run = new KeyLoadRun({
    url,
    model: 'm',
    what: 'burst',
    connections: 4,
    keys: 40,
    requests: 40,
    waves: true,
    secretOf: (i) => `k${i}`,
  });
  await run.run();
  const { waves, latency } = run.result();
  t.equal(waves?.first.count, 4, 'one request of each connection in the first wave');
  t.equal(waves?.later.count, 36, 'the rest after it');
  t.ok(waves!.first.p50! >= 140, `the first wave waited for the held answers (${waves!.first.p50} ms)`);
  t.ok(waves!.later.max! < waves!.first.p50!, `nothing after it waited as long (${waves!.later.max} ms)`);
  t.equal(latency.count, 40);
});
