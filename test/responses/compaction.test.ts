// Compaction on the Responses surface, on every upstream dialect (docs/api.md, "Compaction"):
// an input ending with `compaction_trigger` (Codex's remote compaction, over HTTP and over its
// WebSocket) is answered by one compaction item holding the model's summary; that item sent
// back is the summary again for every upstream; POST /v1/responses/compact answers the
// compacted conversation. Each is one billed call.

import t from 'tap';
import OpenAI from 'openai';
import { WebSocket } from 'undici';
import { reconcile } from '../../src/billing/reconcile.js';
import { inputTokenBound, sizeOf } from '../../src/billing/prompt-size.js';
import { COMPACTION_PROMPT, compactionItem, SUMMARY_HEADING } from '../../src/dialects/responses/compaction.js';
import { promptParts } from '../../src/dialects/responses/prompt.js';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { responsesUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: responsesUpstream(fake.url) }),
});
const sql = gw.stores.sql;
const u = await gw.user('20');
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
const MODELS = ['oa-model', 'an-model', 'rs-model'] as const;
const PREFIX = 'airouter.compaction.v1.';
const summaryOf = (item: any) =>
  Buffer.from(String(item.encrypted_content).slice(PREFIX.length), 'base64url').toString();
const TOOL = {
  type: 'function',
  name: 'exec_command',
  description: 'Runs a command.',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
};
const history = [
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'fix the failing test' }] },
  {
    type: 'message',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'I ran the tests; one fails in parser.ts.' }],
  },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go on' }] },
];

async function lastRecord() {
  await gw.services.outbox.drained();
  const [r] = await sql<{ prompt_tokens: number; completion_tokens: number; cost_nano: bigint; surface: string }[]>`
    SELECT prompt_tokens, completion_tokens, cost_nano, surface FROM usage_records WHERE user_id = ${u.userId} ORDER BY id DESC LIMIT 1`;
  return r!;
}

t.test(
  'a compaction_trigger is answered by one compaction item holding the summary, on every upstream dialect',
  async (t) => {
    for (const model of MODELS) {
      fake.reset();
      const r = (await client.responses.create({
        model,
        instructions: 'Be a coding agent.',
        input: [...history, { type: 'compaction_trigger' }] as never,
        tools: [TOOL] as never,
        store: false,
      })) as any;
      t.equal(r.output.length, 1, `${model}: one item`);
      t.match(r.output[0], {
        type: 'compaction',
        id: /^cmp_/,
        encrypted_content: new RegExp(`^${PREFIX.replace(/\./g, '\\.')}`),
      });
      t.equal(summaryOf(r.output[0]), TEXT_ANSWER, "the model's answer is the summary");
      const sent = fake.requests[0]!;
      const json = JSON.stringify(sent.body);
      t.ok(json.includes(COMPACTION_PROMPT.slice(0, 40)), `${model}: the model was asked for a summary`);
      t.ok(json.includes('fix the failing test') && json.includes('one fails in parser.ts'), 'with the conversation');
      t.notOk(
        json.includes('compaction_trigger'),
        "the trigger itself is the gateway's to answer, even for a Responses provider",
      );
      const choice = sent.body.tool_choice;
      t.ok(
        choice === 'none' || (choice && choice.type === 'none'),
        `${model}: no tool may be called (${JSON.stringify(choice)})`,
      );
      const rec = await lastRecord();
      t.equal(rec.surface, 'responses');
      t.equal(
        rec.cost_nano,
        BigInt(r.usage.input_tokens) * 1000n + BigInt(r.usage.output_tokens) * 2000n,
        `${model}: billed its usage`,
      );
    }
  },
);

t.test('streamed: the compaction item is the only output item, and no text is shown', async (t) => {
  for (const model of MODELS) {
    const stream = client.responses.stream({
      model,
      input: [...history, { type: 'compaction_trigger' }] as never,
      store: false,
    });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = (await stream.finalResponse()) as any;
    t.notOk(types.includes('response.output_text.delta'), `${model}: no text deltas`);
    t.same(
      types.filter((x) => x.startsWith('response.output_item')),
      ['response.output_item.added', 'response.output_item.done'],
      'one item added and done',
    );
    t.equal(final.output.length, 1);
    t.equal(final.output[0].type, 'compaction');
    t.equal(summaryOf(final.output[0]), TEXT_ANSWER);
  }
});

t.test("over the WebSocket mode too (Codex's remote compaction)", async (t) => {
  const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/responses`, {
    headers: { authorization: `Bearer ${u.key}` },
  } as never);
  const got: any[] = [];
  ws.addEventListener('message', (ev) => got.push(JSON.parse(String(ev.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve);
    ws.addEventListener('error', reject);
  });
  ws.send(
    JSON.stringify({
      type: 'response.create',
      model: 'an-model',
      input: [...history, { type: 'compaction_trigger' }],
      store: false,
      stream: true,
    }),
  );
  for (let i = 0; i < 200 && !got.some((m) => m.type === 'response.completed'); i++)
    await new Promise((r) => setTimeout(r, 20));
  const done = got.find((m) => m.type === 'response.completed');
  t.equal(done?.response.output[0].type, 'compaction');
  t.same(
    got.filter((m) => m.type === 'response.output_item.done').map((m) => m.item.type),
    ['compaction'],
    'exactly one output_item.done, of the compaction',
  );
  ws.close();
});

t.test(
  'the compaction item sent back is the summary again: to a translated model and to a Responses provider',
  async (t) => {
    const item = compactionItem('We fixed the parser; the lexer test still fails.');
    for (const model of MODELS) {
      fake.reset();
      await client.responses.create({
        model,
        input: [
          { role: 'user', content: 'fix the failing test' },
          item,
          { role: 'user', content: 'continue' },
        ] as never,
        store: false,
      });
      const json = JSON.stringify(fake.requests[0]!.body);
      t.ok(
        json.includes(SUMMARY_HEADING) && json.includes('the lexer test still fails'),
        `${model}: the upstream reads the summary`,
      );
      t.notOk(json.includes(PREFIX), `${model}: never the wrapped item`);
    }
    // A vendor's own compaction item is its encrypted state: only a provider of its dialect can read it.
    const foreign = { type: 'compaction', id: 'cmp_vendor', encrypted_content: 'gAAAAB-vendor-state' };
    fake.reset();
    await client.responses.create({
      model: 'rs-model',
      input: [foreign, { role: 'user', content: 'continue' }] as never,
      store: false,
    });
    t.ok(
      JSON.stringify(fake.requests[0]!.body).includes('gAAAAB-vendor-state'),
      'forwarded as is to a Responses provider',
    );
    fake.reset();
    await client.responses.create({
      model: 'an-model',
      input: [foreign, { role: 'user', content: 'continue' }] as never,
      store: false,
    });
    t.notOk(
      JSON.stringify(fake.requests[0]!.body).includes('gAAAAB'),
      'left out for another dialect, which cannot read it',
    );
  },
);

t.test(
  'POST /v1/responses/compact: the latest user messages and the compaction item, billed as one call',
  async (t) => {
    for (const model of MODELS) {
      fake.reset();
      const res = await fetch(`${gw.url}/v1/responses/compact`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, instructions: 'Be a coding agent.', input: history, tools: [TOOL] }),
      });
      t.equal(res.status, 200, model);
      const body = (await res.json()) as any;
      t.equal(body.object, 'response.compaction');
      t.match(body.id, /^resp_|^resp/);
      t.same(body.output.slice(0, 2), [history[0], history[2]], "the user's messages, in order");
      t.equal(body.output.length, 3);
      t.equal(body.output[2].type, 'compaction');
      t.equal(summaryOf(body.output[2]), TEXT_ANSWER);
      t.equal(fake.requests.length, 1, 'one upstream call');
      const rec = await lastRecord();
      t.equal(
        rec.cost_nano,
        BigInt(body.usage.input_tokens) * 1000n + BigInt(body.usage.output_tokens) * 2000n,
        `${model}: billed its usage`,
      );
    }
  },
);

t.test("POST /v1/responses/compact refuses as POST /v1/responses does, in OpenAI's envelope", async (t) => {
  const compact = (key: string, body: unknown) =>
    fetch(`${gw.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  t.match(await compact('ar-nope', { model: 'oa-model', input: history }), {
    status: 401,
    body: { error: { code: 'invalid_api_key' } },
  });
  t.match(await compact(u.key, { model: 'no-such', input: history }), {
    status: 404,
    body: { error: { code: 'model_not_found' } },
  });
  t.match(await compact(u.key, '{"model":'), { status: 400, body: { error: { code: 'invalid_json' } } });
  t.match(await compact(u.key, [1]), { status: 400, body: { error: { type: 'invalid_request_error' } } });
  t.match(await compact(u.key, { model: 'oa-model', input: 7 }), {
    status: 400,
    body: { error: { type: 'invalid_request_error' } },
  });
  const broke = await gw.user('0');
  fake.reset();
  t.match(await compact(broke.key, { model: 'oa-model', input: history }), {
    status: 402,
    body: { error: { code: 'insufficient_balance' } },
  });
  t.equal(fake.requests.length, 0, 'nothing reached the upstream');
});

t.test("the hold covers what the gateway adds: the compaction instruction and each summary's heading", async (t) => {
  const model = { maxImageTokens: 0, contextWindow: 1e9, longContext: true };
  const bound = (body: Record<string, unknown>) => inputTokenBound(body, sizeOf(body), promptParts(body), model);
  const plain = { model: 'm', input: history };
  const trigger = { model: 'm', input: [...history, { type: 'compaction_trigger' }] };
  t.ok(
    bound(trigger) - bound(plain) >= Buffer.byteLength(COMPACTION_PROMPT),
    'the instruction, a token a byte at most',
  );
  const item = compactionItem('x');
  const withItem = { model: 'm', input: [...history, item] };
  const withOther = {
    model: 'm',
    input: [...history, { ...item, encrypted_content: 'y'.repeat(String(item.encrypted_content).length) }],
  };
  t.ok(bound(withItem) - bound(withOther) >= Buffer.byteLength(SUMMARY_HEADING), 'the heading of a summary');
});

t.test('the books', async (t) => {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, []);
  t.same(report.hotMismatches, []);
});
