// Crash drills on Redis (real processes; a Redis server of the test's own behind a TCP proxy):
// a restart from its append-only file, a FLUSHALL, and a cut link, each under load.

import t from 'tap';
import { redisCut, redisFlush, redisRestart } from '../drills/drills.js';
import { DrillRig } from '../drills/rig.js';

interface Answer {
  status: number;
  body: string;
}

/** One request of `key` on a surface, not streamed. */
async function ask(rig: DrillRig, key: string, surface: 'chat' | 'messages'): Promise<Answer> {
  const messages = surface === 'messages';
  const res = await fetch(`${rig.gateway.url}${messages ? '/v1/messages' : '/v1/chat/completions'}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(messages ? { 'x-api-key': key } : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({
      model: messages ? 'an-model' : 'oa-model',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'during the cut' }],
    }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: await res.text() };
}

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
  // The load's own key draws on its process's lease for a while, so which of its requests are
  // refused is chance; a key no process has met needs Redis at once, on either surface.
  const spare = await rig.spareKey();
  const r = await redisCut(rig, 3000, () => Promise.all([ask(rig, spare, 'chat'), ask(rig, spare, 'messages')]));
  const cut = r.during as { cutAt: number; restoredAt: number; probe: [Answer, Answer] };
  const refused = r.outcomes.filter((o) => o.status === 503);
  t.ok(refused.length > 0, `requests during the cut were refused (${refused.length})`);
  const [chat, messages] = cut.probe;
  t.equal(chat.status, 503, 'a new key on the chat surface is refused');
  t.match(JSON.parse(chat.body), { error: { type: 'service_unavailable' } }, 'in the OpenAI envelope');
  t.equal(messages.status, 503, 'a new key on the messages surface is refused');
  t.match(JSON.parse(messages.body), { type: 'error', error: { type: 'api_error' } }, 'in the Anthropic envelope');
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
