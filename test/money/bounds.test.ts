// The hold bounds what a vendor can bill, by construction: against a vendor that bills the o200k
// tokens of every string and key it is sent (the fake's `every-string` billing), no body shape
// takes a balance below zero. And the paths that bill without the vendor's usage (the client
// left, the upstream cut the stream or never said) count everything that was forwarded.

import t, { type Test } from 'tap';
import { reconcile } from '../../src/billing/reconcile.js';
import { everyStringTokens, startFakeUpstream } from '../fake-upstream/server.js';
import { waitFor } from '../helpers/child.js';
import { geminiUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream({ billing: 'every-string' });
t.teardown(() => fake.close());
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: geminiUpstream(fake.url) }),
});
/** The dialect of a request the fake received, for its every-string bill. */
const dialectOf = (r: { path: string }) =>
  r.path.startsWith('/v1/messages') ? 'anthropic' : r.path.startsWith('/v1beta/') ? 'gemini' : 'openai';
const sql = gw.stores.sql;

const post = (path: string, key: string, body: object, signal?: AbortSignal) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

/** Words that tokenize densely (random base-36: about 1.6 bytes a token), the same every run. */
function denseWords(count: number, seed: number): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(x.toString(36));
  }
  return out.join(' ');
}
/** U+10000 is one o200k token per byte: four a character. Short runs keep the fake's tokenizer fast. */
const dense = (groups: number) => ('\u{10000}'.repeat(8) + ' ').repeat(groups);

type Row = { cost_nano: bigint; prompt_tokens: number; completion_tokens: number; overrun: boolean; status: number };

async function books(t: Test, userId: string) {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'Redis agrees');
  const rows = await sql<
    Row[]
  >`SELECT cost_nano, prompt_tokens, completion_tokens, overrun, status FROM usage_records WHERE user_id = ${userId}`;
  const [{ balance_nano }] = await sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${userId}`;
  return { rows, balance: balance_nano };
}

const overruns = async () => Number(/airouter_billing_overruns_total (\d+)/.exec(await gw.metrics())?.[1] ?? 0);

/**
 * Sends `body` until the balance refuses it, one at a time and then eight at once, and checks
 * the books: never below zero, no overrun, and every record charged what the vendor billed.
 */
async function flood(t: Test, path: string, balanceUsd: string, body: object) {
  const u = await gw.user(balanceUsd);
  const overrunsBefore = await overruns();
  fake.reset();
  let served = 0;
  for (let i = 0; i < 40; i++) {
    const res = await post(path, u.key, body);
    await res.arrayBuffer();
    if (res.status === 402) break;
    t.equal(res.status, 200, 'answered or refused, nothing else');
    served++;
  }
  for (let round = 0; round < 5; round++) {
    const statuses = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await post(path, u.key, body);
        await res.arrayBuffer();
        return res.status;
      }),
    );
    served += statuses.filter((s) => s === 200).length;
    if (statuses.every((s) => s === 402)) break;
  }
  t.ok(served > 0, `some were served (${served})`);
  const { rows, balance } = await books(t, u.userId);
  t.ok(balance >= 0n, `the balance never went below zero (${balance} nano)`);
  t.equal(await overruns(), overrunsBefore, 'no answer cost more than its hold');
  t.ok(
    rows.every((r) => !r.overrun),
    'no record is an overrun',
  );
  const billed = fake.requests.reduce((n, r) => n + everyStringTokens(r.body, dialectOf(r)), 0);
  const recorded = rows.reduce((n, r) => n + r.prompt_tokens, 0);
  t.equal(recorded, billed, 'charged for every input token the vendor billed');
}

const DECOY = denseWords(2500, 7);
const decoyTool = {
  type: 'function',
  function: {
    name: 'lookup',
    description: 'Looks a thing up.',
    parameters: {
      type: 'object',
      properties: { q: { type: 'string' } },
      // Objects shaped like images, in a schema: text to the vendor, whatever their shape.
      examples: [
        { type: 'image_url', image_url: { url: 'https://example.test/a.png' }, note: DECOY },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: DECOY } },
      ],
    },
  },
};

t.test('image-shaped decoys in a tool schema are held as text', async (t) => {
  await flood(t, '/v1/chat/completions', '0.2', {
    model: 'oa-model',
    max_tokens: 8,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [decoyTool],
  });
});

t.test('image-shaped decoys through the messages surface, to either upstream', async (t) => {
  const tool = { name: 'lookup', description: 'Looks a thing up.', input_schema: decoyTool.function.parameters };
  for (const model of ['an-model', 'oa-model']) {
    await flood(t, '/v1/messages', '0.2', {
      model,
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [tool],
    });
  }
});

t.test('dense characters in values: one token a byte is held for', async (t) => {
  await flood(t, '/v1/chat/completions', '0.1', {
    model: 'oa-model',
    max_tokens: 8,
    messages: [{ role: 'user', content: dense(1200) }],
  });
});

t.test('dense characters in tool property names: keys are held by their bytes', async (t) => {
  const properties = Object.fromEntries(
    Array.from({ length: 400 }, (_, i) => [`${'\u{10000}'.repeat(6)}${i}`, { type: 'string' }]),
  );
  await flood(t, '/v1/chat/completions', '0.1', {
    model: 'oa-model',
    max_tokens: 8,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties } } }],
  });
  await flood(t, '/v1/messages', '0.1', {
    model: 'an-model',
    max_tokens: 8,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ name: 'f', input_schema: { type: 'object', properties } }],
  });
});

t.test('the Gemini surface: dense property names and image-shaped decoys, passed through and translated', async (t) => {
  const properties = Object.fromEntries(
    Array.from({ length: 400 }, (_, i) => [`${'\u{10000}'.repeat(6)}${i}`, { type: 'string' }]),
  );
  const examples = [
    { inlineData: { mimeType: 'image/png', data: DECOY } },
    { fileData: { mimeType: 'image/png', fileUri: 'https://example.test/a.png' }, note: DECOY },
  ];
  for (const model of ['gm-model', 'oa-model']) {
    await flood(t, `/v1beta/models/${model}:generateContent`, '0.1', {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      tools: [
        { functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object', properties, examples } }] },
      ],
      generationConfig: { maxOutputTokens: 8 },
    });
  }
});

// ---- Billing without the vendor's usage: everything forwarded is counted.

/** A json_schema response format of dense text: forwarded, read and billed by the vendor. */
const SCHEMA = {
  type: 'json_schema',
  json_schema: { name: 'answer', schema: { type: 'object', description: denseWords(3000, 11) } },
};

async function recordOf(requestId: string): Promise<Row> {
  return waitFor(async () => {
    await gw.services.outbox.drained();
    const [row] = await sql<
      Row[]
    >`SELECT cost_nano, prompt_tokens, completion_tokens, overrun, status FROM usage_records WHERE request_id = ${requestId}`;
    return row;
  }, 10_000);
}

/** The input the vendor billed for the one request it got. */
function vendorInput(): number {
  t.equal(fake.requests.length, 1, 'one request reached the vendor');
  const r = fake.requests[0]!;
  return everyStringTokens(r.body, dialectOf(r));
}

function within10(t: Test, charged: number, billed: number, what: string) {
  t.ok(
    Math.abs(charged - billed) <= billed * 0.1,
    `${what}: ${charged} input tokens charged for the vendor's ${billed}`,
  );
}

const chatBody = (content: string, extra: object = {}) => ({
  model: 'oa-model',
  max_tokens: 50,
  messages: [{ role: 'user', content }],
  response_format: SCHEMA,
  ...extra,
});

t.test('a client that leaves a stream before the usage chunk pays for all the input', async (t) => {
  const u = await gw.user('5');
  fake.reset();
  const controller = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', 'x-request-id': 'bounds-abort-1' },
    body: JSON.stringify(
      chatBody('go slowly [[paced:40:50]]', { stream: true, unknown_field_of_mine: denseWords(1000, 3) }),
    ),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  controller.abort();
  const row = await recordOf('bounds-abort-1');
  t.equal(row.status, 499);
  within10(t, row.prompt_tokens, vendorInput(), 'client abort');
});

t.test('an upstream that cuts the stream: all the input is charged', async (t) => {
  const u = await gw.user('5');
  fake.reset();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', 'x-request-id': 'bounds-cut-1' },
    body: JSON.stringify(chatBody('cut [[drop:3]]', { stream: true })),
  });
  await res.text();
  const row = await recordOf('bounds-cut-1');
  t.equal(row.status, 502);
  within10(t, row.prompt_tokens, vendorInput(), 'upstream cut');
});

t.test('an upstream that never reports usage, streamed and whole', async (t) => {
  const u = await gw.user('5');
  for (const [id, stream] of [
    ['bounds-nousage-stream', true],
    ['bounds-nousage-whole', false],
  ] as const) {
    fake.reset();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify(chatBody('say little [[no_usage:5]]', { stream })),
    });
    t.equal(res.status, 200);
    await res.text();
    const row = await recordOf(id);
    t.equal(row.status, 200);
    within10(t, row.prompt_tokens, vendorInput(), stream ? 'no usage chunk' : 'no usage field');
  }
});

t.test('translated: a messages client on an OpenAI upstream that never reports usage', async (t) => {
  const u = await gw.user('5');
  fake.reset();
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${u.key}`,
      'content-type': 'application/json',
      'x-request-id': 'bounds-nousage-cross',
    },
    body: JSON.stringify({
      model: 'oa-model',
      max_tokens: 50,
      stream: true,
      system: denseWords(2000, 5),
      messages: [{ role: 'user', content: 'say little [[no_usage:5]]' }],
      tools: [
        {
          name: 'lookup',
          description: denseWords(500, 9),
          input_schema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    }),
  });
  await res.text();
  const row = await recordOf('bounds-nousage-cross');
  within10(t, row.prompt_tokens, vendorInput(), 'translated, no usage');
});
