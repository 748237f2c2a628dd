// `npm run drill`: the crash drills against a live gateway (`airouter serve` with two workers on
// a Postgres database and a Redis server of their own, links through TCP proxies), one after the
// other, and a table of drill → answered, recorded, lost, recovery time. The same drills run as
// tap tests in test/crash/; this prints the figures the README quotes.

import { postgresCut, primaryKill, redisCut, redisFlush, redisRestart, workerKill } from '../test/drills/drills.js';
import { DrillRig, formatResult, TABLE_HEAD, type DrillResult } from '../test/drills/rig.js';

const drills: { name: string; aof?: boolean; run: (rig: DrillRig) => Promise<DrillResult> }[] = [
  { name: 'worker', run: workerKill },
  { name: 'primary', run: primaryKill },
  { name: 'redis-restart', aof: true, run: redisRestart },
  { name: 'redis-flush', run: redisFlush },
  { name: 'redis-cut', run: (rig) => redisCut(rig, 3000) },
  { name: 'postgres-cut', run: (rig) => postgresCut(rig, 20_000) },
];

const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const rows: string[] = [];
let failed = false;
for (const d of drills) {
  if (only.length > 0 && !only.includes(d.name)) continue;
  const cleanups: (() => unknown)[] = [];
  const teardown = { teardown: (fn: () => unknown) => void cleanups.push(fn) };
  process.stderr.write(`drill ${d.name}…\n`);
  try {
    const rig = await DrillRig.start(teardown, { workers: 2, aof: d.aof });
    const r = await d.run(rig);
    rows.push(formatResult(r));
    if (r.lost > 0 || r.duplicates > 0 || !r.reconcile.ok) failed = true;
  } catch (err) {
    failed = true;
    rows.push(`| ${d.name} | failed: ${(err as Error).message.split('\n')[0]} |`);
  } finally {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => {});
  }
}
process.stdout.write(`${TABLE_HEAD}\n${rows.join('\n')}\n`);
process.exit(failed ? 1 : 0);
