// Crash drills on the gateway's own processes (real processes, real Postgres and Redis):
// kill -9 of a worker and of the primary under load. Every request answered in full has exactly
// one usage record afterwards, and the ledger reconciles in Postgres and in Redis.

import t from 'tap';
import { primaryKill, workerKill } from '../drills/drills.js';
import { DrillRig } from '../drills/rig.js';
import { waitFor } from '../helpers/child.js';

t.test('kill -9 of a worker, then of the primary, under load', async (t) => {
  const rig = await DrillRig.start(t, { workers: 2 });
  // Under a loaded machine a worker may have been replaced already: wait for two live ones.
  await waitFor(() => rig.workerPids().length === 2, 10_000).catch(() => {});
  t.equal(
    rig.workerPids().length,
    2,
    `two workers (${JSON.stringify(rig.workerPids())}, primary ${rig.gateway.proc.pid})`,
  );

  const w = await workerKill(rig);
  t.ok(w.answered > 20, `answers flowed (${w.answered})`);
  t.equal(w.lost, 0, 'no answered request without its record');
  t.equal(w.duplicates, 0, 'no request recorded twice');
  t.same(w.reconcile.mismatches, [], 'Postgres reconciles');
  t.same(w.reconcile.hotMismatches, [], 'Redis agrees with Postgres');
  t.ok(w.recoveryMs !== null, 'answers went on');
  const pids = rig.workerPids();
  t.equal(pids.length, 2, 'the primary replaced the dead worker');
  t.notOk(pids.includes(w.during.killed as number), 'with a new process');

  const p = await primaryKill(rig);
  t.ok(p.answered > 20, `answers flowed (${p.answered})`);
  t.equal(p.lost, 0, 'no answered request without its record');
  t.equal(p.duplicates, 0);
  t.equal(p.reconcile.ok, true, 'the ledger reconciles');
  t.ok(p.recoveryMs !== null && p.recoveryMs < 30_000, `serving again after the restart (${p.recoveryMs} ms)`);
  const failures = new Map<string, number>();
  for (const o of p.outcomes)
    if (!o.complete)
      failures.set(
        `${o.status} ${o.error?.slice(0, 80)}`,
        (failures.get(`${o.status} ${o.error?.slice(0, 80)}`) ?? 0) + 1,
      );
  t.comment(JSON.stringify([...failures].slice(0, 5)));
  t.comment(
    JSON.stringify({
      worker: { ...w, outcomes: undefined, reconcile: undefined },
      primary: { ...p, outcomes: undefined, reconcile: undefined },
    }),
  );
});
