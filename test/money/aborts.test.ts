// A client that goes away once the upstream has its request still pays for what the upstream
// billed: a whole answer is read to its end and charged from its usage; a stream is charged for
// its input and every token produced, in every choice.

import t from 'tap';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { waitFor } from '../helpers/child.js';
import { startTestGateway } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const sql = gw.stores.sql;

type Row = { status: number; prompt_tokens: number; completion_tokens: number; cost_nano: bigint };
async function recordOf(requestId: string): Promise<Row> {
  return waitFor(async () => {
    await gw.services.outbox.drained();
    const [row] = await sql<
      Row[]
    >`SELECT status, prompt_tokens, completion_tokens, cost_nano FROM usage_records WHERE request_id = ${requestId}`;
    return row;
  }, 10_000);
}

t.test('a whole answer the client left before it came is billed as the upstream reports it', async (t) => {
  const u = await gw.user('1');
  const controller = new AbortController();
  const sent = fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', 'x-request-id': 'abort-whole-1' },
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'take your time [[slow:600]]' }] }),
    signal: controller.signal,
  }).catch((e: Error) => e);
  await waitFor(() => fake.requests.some((r) => JSON.stringify(r.body).includes('take your time')), 5000);
  controller.abort();
  t.type(await sent, Error, 'the client gave up');
  const row = await recordOf('abort-whole-1');
  t.equal(row.status, 499, 'recorded as a client abort');
  t.ok(row.prompt_tokens > 0 && row.completion_tokens > 0, 'with the input and output the upstream reported');
  t.equal(row.cost_nano, BigInt(row.prompt_tokens) * 1000n + BigInt(row.completion_tokens) * 2000n, 'charged for them');
});

t.test(
  'a stream the client left before the upstream answered: the upstream request is abandoned, its input billed',
  async (t) => {
    const u = await gw.user('1');
    const controller = new AbortController();
    const sent = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${u.key}`,
        'content-type': 'application/json',
        'x-request-id': 'abort-before-1',
      },
      body: JSON.stringify({
        model: 'oa-model',
        stream: true,
        messages: [{ role: 'user', content: 'leave before it answers [[slow:1500]]' }],
      }),
      signal: controller.signal,
    }).catch((e: Error) => e);
    await waitFor(() => fake.requests.some((r) => JSON.stringify(r.body).includes('leave before it answers')), 5000);
    const streams = fake.streams.length;
    controller.abort();
    t.type(await sent, Error, 'the client gave up');
    const row = await recordOf('abort-before-1');
    t.equal(row.status, 499, 'recorded as a client abort');
    t.ok(row.prompt_tokens > 0, `its input is billed (${row.prompt_tokens} tokens)`);
    t.equal(row.completion_tokens, 0, 'and no output, none having come');
    t.equal(row.cost_nano, BigInt(row.prompt_tokens) * 1000n, 'charged for the input');
    // Had the gateway kept waiting, the fake would have begun its stream once its delay was over.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    t.equal(fake.streams.length, streams, 'the upstream request was abandoned before it answered');
  },
);

t.test('an aborted stream with n = 3 counts every choice', async (t) => {
  const u = await gw.user('1');
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${u.key}`,
      'content-type': 'application/json',
      'x-request-id': 'abort-stream-n3',
    },
    body: JSON.stringify({
      model: 'oa-model',
      n: 3,
      max_tokens: 500,
      stream: true,
      messages: [{ role: 'user', content: 'fill [[fill:10]]' }],
    }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const perChoice = [0, 0, 0];
  let text = '';
  while (perChoice.reduce((a, b) => a + b, 0) < 60) {
    const { value } = await reader.read();
    text += Buffer.from(value!).toString();
    const events = text.split('\n\n');
    text = events.pop()!;
    for (const e of events) {
      const m = /"index":(\d),"delta":\{"content":"w /.exec(e);
      if (m) perChoice[Number(m[1])]++;
    }
  }
  controller.abort();
  t.ok(
    perChoice.every((n) => n > 10),
    `deltas arrived for every choice (${perChoice})`,
  );
  const row = await recordOf('abort-stream-n3');
  t.equal(row.status, 499);
  const seen = perChoice.reduce((a, b) => a + b, 0);
  t.ok(
    row.completion_tokens >= seen,
    `billed ${row.completion_tokens} output tokens for at least the ${seen} the client saw across the choices`,
  );
  t.ok(row.prompt_tokens > 0, 'and the input');
  await gw.services.outbox.drained();
  t.equal((await reconcile(sql, gw.stores.hot)).ok, true, 'the ledger reconciles');
});
