// The bench's open-loop schedule (bench/lib/schedule.ts): the warm-up rises evenly to the rate,
// the measured part holds it.

import t from 'tap';
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
  for (let i = 1; i < s.total; i++) if (s.dueAt(i) < s.dueAt(i - 1)) t.fail(`request ${i} is due before the one before it`);
});

t.test('no warm-up: the rate from the start', async (t) => {
  const s = openLoopSchedule(200, 0, 1);
  t.equal(s.warmupCount, 0);
  t.equal(s.total, 200);
  t.equal(s.dueAt(0), 0);
  t.equal(s.dueAt(199), 995);
});
