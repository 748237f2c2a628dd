// Crash drills on Redis (real processes; a Redis server of the test's own behind a TCP proxy):
// a restart from its append-only file, a FLUSHALL, and a cut link, each under load.

import t from 'tap';
import { redisCut, redisFlush, redisRestart } from '../drills/drills.js';
import { DrillRig } from '../drills/rig.js';

t.test('Redis killed and restarted from its AOF under load: no charge lost, no balance grows', async (t) => {
  const rig = await DrillRig.start(t, { workers: 2, aof: true });
  const r = await redisRestart(rig);
  t.ok(r.answered > 20, `answers flowed (${r.answered})`);
  t.equal(r.lost, 0, 'every full answer has its record (what the AOF lost was settled again)');
  t.equal(r.duplicates, 0);
  t.same(r.reconcile.mismatches, [], 'Postgres reconciles');
  t.same(r.reconcile.hotMismatches, [], 'the hot balance agrees: it did not grow');
  t.ok(r.recoveryMs !== null, `serving again (${r.recoveryMs} ms after Redis came back)`);
  t.comment(JSON.stringify({ ...r, outcomes: undefined, reconcile: undefined }));
});

t.test('Redis flushed under load: nothing lost, balances loaded again from Postgres', async (t) => {
  const rig = await DrillRig.start(t, { workers: 2 });
  const r = await redisFlush(rig);
  t.ok(r.answered > 20, `answers flowed (${r.answered})`);
  t.equal(r.lost, 0, 'every full answer has its record');
  t.equal(r.duplicates, 0);
  t.same(r.reconcile.mismatches, [], 'Postgres reconciles');
  t.same(r.reconcile.hotMismatches, [], 'the reloaded hot balance agrees');
  t.ok(r.recoveryMs !== null && r.recoveryMs < 5000, `serving again (${r.recoveryMs} ms)`);
  t.comment(JSON.stringify({ ...r, outcomes: undefined, reconcile: undefined }));
});

t.test('Redis cut: 503s in the surface envelope, nothing served unbilled, recovery without a restart', async (t) => {
  const rig = await DrillRig.start(t, { workers: 2 });
  const r = await redisCut(rig, 3000);
  const cut = r.during as { cutAt: number; restoredAt: number };
  const refused = r.outcomes.filter((o) => o.status === 503);
  t.ok(refused.length > 0, `requests during the cut were refused (${refused.length})`);
  const chat = refused.find((o) => o.kind !== 'messages-stream');
  const messages = refused.find((o) => o.kind === 'messages-stream');
  t.match(JSON.parse(chat!.error!), { error: { type: 'service_unavailable' } }, 'OpenAI envelope on the chat surface');
  t.match(
    JSON.parse(messages!.error!),
    { type: 'error', error: { type: 'api_error' } },
    'Anthropic envelope on the messages surface',
  );
  const sentDuring = refused.filter((o) => o.startedAt > cut.cutAt + 200 && o.endedAt < cut.restoredAt);
  const slowest = Math.max(...sentDuring.map((o) => o.endedAt - o.startedAt));
  t.ok(slowest < 3000, `refused within the connect timeout (slowest ${slowest} ms, REDIS_TIMEOUT_MS 1000)`);
  t.ok(
    r.outcomes.every((o) => o.status === 200 || o.status === 503 || o.status === 0),
    'nothing but answers and 503s',
  );
  t.equal(r.lost, 0, 'every full answer has its record');
  const begun = r.outcomes.filter((o) => o.status === 200 && !o.complete).length;
  t.equal(r.partialBilled, begun, `streams cut short by the outage were billed once Redis returned (${begun})`);
  t.equal(r.duplicates, 0);
  t.same(r.reconcile.mismatches, [], 'Postgres reconciles');
  t.same(r.reconcile.hotMismatches, [], 'and Redis with it');
  t.ok(r.recoveryMs !== null && r.recoveryMs < 5000, `serving again without a restart (${r.recoveryMs} ms)`);
  t.comment(JSON.stringify({ ...r, outcomes: undefined, reconcile: undefined }));
});
