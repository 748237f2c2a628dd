// Codex's WebSocket session as captured (test/fixtures/clients/codex-websocket.json, Codex CLI
// 0.171.0 run by `npm run test:clients -- --keep`): the upgrade with its headers, the warm-up
// (`generate: false`), the first turn continuing it with only the new items, and the tool
// result continuing the first turn, all with `store: false`. Replayed over a socket to an
// Anthropic-dialect model, an OpenAI-chat model and a Responses provider: each upstream must see
// the whole conversation, the client the events it reads, and each real turn a record.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'undici';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { fixturePath } from '../fixtures/index.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

interface SocketFixture {
  client: string;
  toolCallId: string;
  upgrade: { path: string; headers: Record<string, string> };
  messages: Record<string, any>[];
}
const fx: SocketFixture = JSON.parse(readFileSync(fixturePath('clients/codex-websocket.json'), 'utf8'));

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const model = (id: string, provider: string) => ({
  id,
  owned_by: 'fake',
  context_window: 400000,
  max_output_tokens: 64000,
  ...PRICES,
  routes: [{ provider, model: 'tool_round', reasoning: true }],
});
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    providers: [
      { id: 'fake-responses', dialect: 'responses', base_url: `${fake.url}/v1`, api_key: { env: 'FAKE_OPENAI_KEY' } },
    ],
    models: [model('ws-an', 'fake-anthropic'), model('ws-oa', 'fake-openai'), model('ws-rs', 'fake-responses')],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const user = await gw.user('100');

async function connect() {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(fx.upgrade.headers)) headers[k] = v.replace('ar-REPLACED-BY-THE-TEST', user.key);
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}${fx.upgrade.path}`, { headers } as never);
  const received: Record<string, any>[] = [];
  let wake = () => {};
  let closed: string | undefined;
  ws.addEventListener('message', (ev) => {
    received.push(JSON.parse(String(ev.data)));
    wake();
  });
  // A socket dropped mid-turn fails the turn at once rather than leaving it to tap's timeout.
  ws.addEventListener('close', (ev) => {
    closed = `the socket closed (${ev.code})`;
    wake();
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', reject);
  });
  /** Sends one message; the events until the turn's last. */
  const turn = async (message: Record<string, any>) => {
    const from = received.length;
    ws.send(JSON.stringify(message));
    for (;;) {
      const end = received.findIndex(
        (m, i) => i >= from && ['response.completed', 'response.failed', 'error'].includes(m.type),
      );
      if (end !== -1) return received.slice(from, end + 1);
      if (closed) throw new Error(closed);
      await new Promise<void>((r) => (wake = r));
    }
  };
  return { ws, turn };
}

t.test('the capture is what the replay assumes', async (t) => {
  t.same(
    fx.messages.map((m) => m.type),
    ['response.create', 'response.create', 'response.create'],
  );
  t.equal(fx.messages[0]!.generate, false, 'a warm-up first');
  t.ok(
    fx.messages[1]!.previous_response_id && fx.messages[2]!.previous_response_id,
    'then two turns, each continuing the one before',
  );
  t.ok(
    fx.messages.every((m) => m.store === false),
    'nothing stored',
  );
  t.equal(fx.messages[2]!.input.length, 1, "the last carries only the tool's result");
  t.equal(fx.upgrade.headers['openai-beta'], 'responses_websockets=2026-02-06');
});

for (const target of ['ws-an', 'ws-oa', 'ws-rs']) {
  t.test(`Codex's session over a WebSocket, to ${target}`, async (t) => {
    const c = await connect();
    const records = () =>
      gw.services.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM usage_records WHERE user_id = ${user.userId}`.then((r) => r[0]!.n);
    await gw.services.outbox.drained();
    const recordsBefore = await records();
    const upstreamBefore = fake.requests.length;

    const warm = await c.turn({ ...fx.messages[0], model: target });
    t.same(
      warm.map((e) => e.type),
      ['response.created', 'response.completed'],
      'the warm-up: an empty response',
    );
    t.equal(fake.requests.length, upstreamBefore, 'nothing sent upstream for it');

    const first = await c.turn({ ...fx.messages[1], model: target, previous_response_id: warm.at(-1)!.response.id });
    const firstDone = first.at(-1)!;
    t.equal(firstDone.type, 'response.completed', 'the first turn completes');
    const call = firstDone.response.output.find((o: any) => o.type === 'function_call');
    t.equal(call?.name, 'exec_command', 'with a call of the first declared tool');
    const up1 = JSON.stringify(fake.requests.at(-1)!.body);
    t.match(up1, /stand-in for Codex's \d+-character base instructions/, "the warm-up's input reached the upstream");
    t.match(up1, /list the markdown files here/, "and the turn's own");
    t.notMatch(up1, /"web_search"/, 'the hosted tool no model here sells is not forwarded');

    const result = { ...fx.messages[2]!.input[0], call_id: call.call_id };
    const second = await c.turn({
      ...fx.messages[2],
      model: target,
      previous_response_id: firstDone.response.id,
      input: [result],
    });
    const done = second.at(-1)!;
    t.equal(done.type, 'response.completed', `the tool result's turn completes: ${JSON.stringify(done).slice(0, 400)}`);
    t.equal(
      done.response.output.find((o: any) => o.type === 'message')?.content[0].text,
      TEXT_ANSWER,
      'in text, once the result is back',
    );
    const up2 = JSON.stringify(fake.requests.at(-1)!.body);
    t.match(up2, /list the markdown files here/, 'the upstream saw the conversation so far');
    t.match(
      up2,
      new RegExp(
        String(result.output)
          .slice(0, 12)
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      ),
      "and the tool's result",
    );
    t.equal(fake.requests.length, upstreamBefore + 2, 'two upstream calls in all');
    await gw.services.outbox.drained();
    t.equal(await records(), recordsBefore + 2, 'two records: the turns, not the warm-up');
    c.ws.close();
  });
}
