// The Responses API's WebSocket mode, as Codex uses it (docs/api.md, "Responses over a
// WebSocket"): the upgrade checks the key; each response.create runs POST /v1/responses and its
// events come back one text message each; the connection continues its own last answer with
// store: false; generate: false warms up for nothing; a turn cut by a closed socket is billed
// as an aborted HTTP stream is; errors come as `error` messages with the HTTP status.

import t from 'tap';
import http from 'node:http';
import { WebSocket } from 'undici';
import { reconcile } from '../../src/billing/reconcile.js';
import { eventually } from '../helpers/http.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { responsesUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({ upstream: fake.url, extra: responsesUpstream(fake.url) });
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const sql = gw.stores.sql;
const u = await gw.user('5');
const wsUrl = gw.url.replace(/^http/, 'ws') + '/v1/responses';
const BETA = { 'openai-beta': 'responses_websockets=2026-02-06' };

/** A connected socket and the messages it received, as parsed JSON. */
async function connect(key = u.key) {
  const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${key}`, ...BETA } } as never);
  const received: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener('message', (ev) => {
    received.push(JSON.parse(String(ev.data)));
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', (e) => reject(e));
  });
  /** Messages from index `from` until one whose type is in `until`. */
  const until = async (from: number, types: string[]) => {
    for (;;) {
      const end = received.findIndex((m, i) => i >= from && types.includes(m.type));
      if (end !== -1) return received.slice(from, end + 1);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const turn = async (body: Record<string, unknown>) => {
    const from = received.length;
    ws.send(JSON.stringify({ type: 'response.create', ...body }));
    return until(from, ['response.completed', 'response.incomplete', 'response.failed', 'error']);
  };
  return { ws, received, turn };
}

t.test('a turn: the events of the SSE stream, one message each, billed as the HTTP path bills', async (t) => {
  const c = await connect();
  for (const model of ['oa-model', 'an-model', 'rs-model']) {
    const events = await c.turn({ model, input: 'hello there', store: false, stream: true });
    t.equal(events[0]!.type, 'response.created', `${model}: starts as the stream does`);
    const done = events.at(-1)!;
    t.equal(done.type, 'response.completed', `${model}: ends with the whole response`);
    t.ok(
      events.some((e) => e.type === 'response.output_text.delta'),
      'text deltas',
    );
    t.ok(done.response.usage.input_tokens > 0);
  }
  c.ws.close();
});

/** The key's records, oldest first, once the outbox has written them. */
async function records() {
  await gw.services.outbox.drained();
  return sql<
    { surface: string; status: number; prompt_tokens: number; completion_tokens: number; cost_nano: bigint }[]
  >`
    SELECT surface, status, prompt_tokens, completion_tokens, cost_nano FROM usage_records WHERE user_id = ${u.userId} ORDER BY id`;
}

t.test('each turn is charged its usage and recorded, as over HTTP', async (t) => {
  const before = await records();
  const balance = await gw.services.ledger.balance(u.userId);
  const c = await connect();
  const events = await c.turn({ model: 'oa-model', input: 'hello there', store: false });
  c.ws.close();
  const usage = events.at(-1)!.response.usage;
  const rows = (await records()).slice(before.length);
  t.equal(rows.length, 1, 'one record');
  t.match(rows[0], {
    surface: 'responses',
    status: 200,
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
  });
  t.equal(
    rows[0]!.cost_nano,
    BigInt(usage.input_tokens) * 1000n + BigInt(usage.output_tokens) * 2000n,
    'its usage at the catalogue prices',
  );
  const after = await gw.services.ledger.balance(u.userId);
  t.equal(balance.balance - after.balance, rows[0]!.cost_nano, 'the balance paid exactly that');
  t.equal(after.reserved, 0n, 'nothing left held');
});

t.test(
  "store: false turns continue the connection's own last answer; the client sends only the new items",
  async (t) => {
    const c = await connect();
    fake.reset();
    const first = (
      await c.turn({
        model: 'an-model',
        instructions: 'Be brief.',
        input: [{ role: 'user', content: 'first question' }],
        store: false,
      })
    ).at(-1)!.response;
    const second = (
      await c.turn({
        model: 'an-model',
        instructions: 'Be brief.',
        previous_response_id: first.id,
        input: [{ role: 'user', content: 'second question' }],
        store: false,
      })
    ).at(-1)!;
    t.equal(second.type, 'response.completed', 'continued, though nothing was stored');
    const sent = JSON.stringify(fake.requests.at(-1)!.body.messages);
    t.match(sent, /first question[\s\S]*second question/, 'the upstream saw the whole conversation, in order');
    t.match(
      sent,
      new RegExp(first.output[0].content[0].text.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      'the first answer included',
    );
    const stored = await sql`SELECT 1 FROM responses WHERE id = ${first.id}`;
    t.equal(stored.length, 0, 'and nothing was kept in Postgres');
    // Another connection has no such memory: the id names nothing stored.
    const other = await connect();
    const refused = (
      await other.turn({ model: 'an-model', previous_response_id: first.id, input: 'third', store: false })
    ).at(-1)!;
    t.match(
      refused,
      { type: 'error', status: 404, error: { code: 'not_found', param: 'previous_response_id' } },
      'another connection cannot continue it',
    );
    c.ws.close();
    other.ws.close();
  },
);

t.test(
  'generate: false warms up: an empty completed response, nothing upstream, nothing charged, continued by the next turn',
  async (t) => {
    const before = (await records()).length;
    const c = await connect();
    fake.reset();
    const warm = await c.turn({
      model: 'oa-model',
      instructions: 'Be brief.',
      input: [],
      store: false,
      generate: false,
    });
    t.same(
      warm.map((e) => e.type),
      ['response.created', 'response.completed'],
    );
    const id = warm.at(-1)!.response.id;
    t.match(id, /^resp_/);
    t.same(warm.at(-1)!.response.output, []);
    t.equal(fake.requests.length, 0, 'no upstream call');
    const next = (
      await c.turn({
        model: 'oa-model',
        instructions: 'Be brief.',
        previous_response_id: id,
        input: [{ role: 'user', content: 'now answer' }],
        store: false,
      })
    ).at(-1)!;
    t.equal(next.type, 'response.completed', 'the warm-up continued');
    t.equal(fake.requests.length, 1);
    t.equal((await records()).length, before + 1, "one record: the real turn's");
    const unknown = await c.turn({ model: 'no-such-model', input: [], generate: false });
    t.match(
      unknown.at(-1),
      { type: 'error', status: 404, error: { code: 'model_not_found' } },
      'a warm-up of an unknown model is refused',
    );
    c.ws.close();
  },
);

t.test('stored turns are kept and continued as over HTTP, from any connection', async (t) => {
  const c = await connect();
  const first = (await c.turn({ model: 'oa-model', input: 'remember this' })).at(-1)!.response;
  c.ws.close();
  const [row] = await sql`SELECT id FROM responses WHERE id = ${first.id}`;
  t.ok(row, 'kept in Postgres (store defaults to true)');
  const other = await connect();
  const next = (await other.turn({ model: 'oa-model', previous_response_id: first.id, input: 'and now?' })).at(-1)!;
  t.equal(next.type, 'response.completed', 'continued from another connection');
  other.ws.close();
});

t.test(
  "mistakes are error messages with the HTTP status, in OpenAI's error shape; the socket stays open",
  async (t) => {
    const c = await connect();
    const from = c.received.length;
    c.ws.send('not json');
    c.ws.send(JSON.stringify({ type: 'response.cancel' }));
    c.ws.send(JSON.stringify([1]));
    c.ws.send(new Uint8Array([1, 2, 3]));
    c.ws.send(JSON.stringify({ type: 'response.processed', response_id: 'resp_x' }));
    await eventually(() => c.received.length >= from + 4 || undefined);
    const bad = await c.turn({ model: 'oa-model', input: 5 });
    const errors = c.received.slice(from);
    t.match(errors[0], { type: 'error', status: 400, error: { code: 'invalid_json' } });
    t.match(errors[1], { type: 'error', status: 400, error: { code: 'unknown_message_type', param: 'type' } });
    t.match(errors[2], { type: 'error', status: 400, error: { code: 'invalid_message' } });
    t.match(errors[3], { type: 'error', status: 400, error: { code: 'invalid_message', message: /binary/ } });
    t.match(
      bad.at(-1),
      { type: 'error', status: 400, error: { type: 'invalid_request_error', message: /input/ } },
      "the request's own 400, naming the field",
    );
    t.equal(errors.length, 5, `response.processed needs no answer: ${JSON.stringify(errors.map((e) => e.type))}`);
    const missing = await c.turn({ model: 'nope', input: 'hi' });
    t.match(missing.at(-1), { type: 'error', status: 404, error: { code: 'model_not_found' } });
    const ok = await c.turn({ model: 'oa-model', input: 'still here?', store: false });
    t.equal(ok.at(-1)!.type, 'response.completed', 'and the next turn is served');
    c.ws.close();
  },
);

t.test('one turn at a time on a connection', async (t) => {
  const c = await connect();
  const from = c.received.length;
  c.ws.send(
    JSON.stringify({ type: 'response.create', model: 'oa-model', input: 'count [[paced:10:20]]', store: false }),
  );
  c.ws.send(JSON.stringify({ type: 'response.create', model: 'oa-model', input: 'me too', store: false }));
  await eventually(() => c.received.slice(from).some((m) => m.type === 'response.completed') || undefined, 10_000);
  const got = c.received.slice(from);
  t.ok(
    got.some((m) => m.type === 'error' && m.error.code === 'response_in_progress'),
    'the second is refused while the first runs',
  );
  t.equal(got.filter((m) => m.type === 'response.completed').length, 1, 'the first completes');
  c.ws.close();
});

t.test('a balance that cannot pay: 402 as an error message, nothing sent upstream', async (t) => {
  const broke = await gw.user('0');
  const c = await connect(broke.key);
  fake.reset();
  const refused = (await c.turn({ model: 'oa-model', input: 'hi', store: false })).at(-1)!;
  t.match(refused, { type: 'error', status: 402, error: { code: 'insufficient_balance' } });
  t.equal(fake.requests.length, 0);
  c.ws.close();
});

t.test(
  'a socket closed mid-turn aborts the turn: the upstream is cut and what was produced is charged, as an HTTP abort',
  async (t) => {
    const c = await connect();
    fake.reset();
    const before = await gw.services.ledger.balance(u.userId);
    const earlier = (await records()).length;
    const from = c.received.length;
    c.ws.send(
      JSON.stringify({ type: 'response.create', model: 'oa-model', input: 'count [[paced:50:20]]', store: false }),
    );
    await eventually(
      () => c.received.slice(from).filter((m) => m.type === 'response.output_text.delta').length >= 5 || undefined,
    );
    c.ws.close();
    const row = await eventually(async () => (await records()).slice(earlier).find((r) => r.status === 499), 20_000);
    t.ok(row, 'recorded as a client abort');
    t.ok(
      row!.completion_tokens >= 5 && row!.completion_tokens < 50,
      `billed the ${row!.completion_tokens} tokens produced`,
    );
    const after = await eventually(async () => {
      const b = await gw.services.ledger.balance(u.userId);
      return b.reserved === 0n ? b : undefined;
    }, 20_000);
    t.equal(before.balance - after!.balance, row!.cost_nano, 'charged exactly the recorded cost, the hold released');
    const cut = await eventually(() => fake.streams.find((s) => s.aborted));
    t.ok(cut, 'the upstream request was aborted');
  },
);

t.test("the upgrade checks the key: a bad one is an HTTP 401 in OpenAI's envelope, never a socket", async (t) => {
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${gw.url}/v1/responses`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...BETA,
        authorization: 'Bearer ar-not-a-key',
      },
    });
    req.on('upgrade', () => reject(new Error('upgraded')));
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(answer.status, 401);
  t.match(JSON.parse(answer.body), { error: { type: 'authentication_error', code: 'invalid_api_key' } }, answer.body);
});

t.test('the books', async (t) => {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, []);
  t.same(report.hotMismatches, []);
});
