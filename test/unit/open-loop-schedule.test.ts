// The bench's open-loop client (bench/lib/loadgen.ts) and its schedule (bench/lib/schedule.ts):
// the warm-up rises evenly to the rate, the measured part holds it.

import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openLoop } from '../../bench/lib/loadgen.js';
import { openLoopSchedule } from '../../bench/lib/schedule.js';

t.test('the warm-up rises evenly from zero to the rate, then the rate holds', async (t) => {
  const s = openLoopSchedule(1000, 2, 3);
  t.equal(s.warmupMs, 2000);
  t.equal(s.warmupCount, 1000, 'half the requests a full-rate warm-up would send');
  t.equal(s.total, 1000 + 3000);
  t.equal(s.dueAt(0), 0);
  t.equal(s.dueAt(s.warmupCount), 2000, 'the measured part starts when the warm-up ends');
  t.equal(s.dueAt(s.warmupCount + 500), 2500, 'then one request every 1/rate');
  // A quarter of the warm-up's requests fall in its first half: the rate there averages a quarter.
  t.equal(s.dueAt(250), 1000);
  const gaps = [1, 500, 999].map((i) => s.dueAt(i) - s.dueAt(i - 1));
  t.ok(gaps[0]! > gaps[1]! && gaps[1]! > gaps[2]!, 'the gaps shrink as the rate rises');
  t.ok(gaps[2]! >= 1 && gaps[2]! < 1.01, 'to 1/rate at the end of the warm-up');
  for (let i = 1; i < s.total; i++)
    if (s.dueAt(i) < s.dueAt(i - 1)) t.fail(`request ${i} is due before the one before it`);
});

t.test('no warm-up: the rate from the start', async (t) => {
  const s = openLoopSchedule(200, 0, 1);
  t.equal(s.warmupCount, 0);
  t.equal(s.total, 200);
  t.equal(s.dueAt(0), 0);
  t.equal(s.dueAt(199), 995);
});

t.test('the open loop counts every request it offered and its own CPU, warm-up included', async (t) => {
  let served = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      served++;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const r = await openLoop({
    target: { url: `http://127.0.0.1:${port}/x`, headers: {}, body: '{}' },
    rate: 200,
    durationS: 0.5,
    warmupS: 0.5,
    connections: 8,
  });
  const plan = openLoopSchedule(200, 0.5, 0.5);
  t.equal(r.offered, plan.total, 'the warm-up and the measured part');
  t.equal(r.sent, plan.total - plan.warmupCount, 'only the measured part counts as sent');
  t.equal(served, r.offered, 'the server saw every request offered');
  t.ok(r.clientCpuS > 0 && r.clientCpuS < 5, `the client's own CPU: ${r.clientCpuS} s`);
});
