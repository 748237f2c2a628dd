// Crash drill on Postgres (real processes; the link to Postgres through a TCP proxy the test
// cuts for 20 s under load): answers go on from the hot store, records wait in the outbox, and
// every one arrives exactly once when Postgres returns.

import t from 'tap';
import { postgresCut } from '../drills/drills.js';
import { DrillRig } from '../drills/rig.js';

t.test('Postgres cut for 20 s under load', async (t) => {
  const rig = await DrillRig.start(t, { workers: 2 });
  // A dashboard session, opened while Postgres is up.
  const login = await fetch(`${rig.gateway.url}/api/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(login.status, 400, 'dashboard reachable before the cut');

  const r = await postgresCut(rig, 20_000);
  const during = r.during as { readyz: { status: number; body: Record<string, unknown> }; cutAt: number };
  t.equal(during.readyz.status, 503, '/readyz says not ready');
  t.match(during.readyz.body, { postgres: /unreachable/, redis: 'ok' }, 'and which store is down');
  const answeredDuring = r.outcomes.filter(
    (o) => o.complete && o.startedAt > during.cutAt + 500 && o.endedAt < during.cutAt + 19_500,
  );
  t.ok(answeredDuring.length > 50, `answers went on during the cut (${answeredDuring.length})`);
  t.equal(r.lost, 0, 'then every record arrived');
  t.equal(r.duplicates, 0, 'exactly once');
  t.same(r.reconcile.mismatches, [], 'Postgres reconciles');
  t.same(r.reconcile.hotMismatches, [], 'and Redis with it');
  t.comment(JSON.stringify({ ...r, outcomes: undefined, reconcile: undefined }));
});

t.test('dashboard calls that need Postgres answer 503 while it is down', async (t) => {
  const rig = await DrillRig.start(t, { workers: 1 });
  rig.pgProxy.cut('reset');
  const res = await fetch(`${rig.gateway.url}/api/dashboard/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'someone@example.test', password: 'whatever-it-is' }),
  });
  t.equal(res.status, 503);
  t.match(await res.json(), { error: { code: 'unavailable' } });
  rig.pgProxy.restore();
});
