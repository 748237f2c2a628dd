// Money on the Gemini surface: the charge is exactly what the vendor's usageMetadata bills
// (prompt less cached tokens at the input price, cached ones at the cache price, candidates and
// thoughts as output), passed through or translated, whole or streamed; a stream the client
// leaves, or whose upstream says nothing of usage, is billed for what it produced; no balance
// goes below zero.

import t from 'tap';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { waitFor } from '../helpers/child.js';
import { geminiUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';
import { expectedCostNano } from '../helpers/messages.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: geminiUpstream(fake.url) }),
});
const sql = gw.stores.sql;

type Row = {
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_nano: bigint;
};
async function recordOf(requestId: string): Promise<Row> {
  return waitFor(async () => {
    await gw.services.outbox.drained();
    const [row] = await sql<
      Row[]
    >`SELECT status, prompt_tokens, completion_tokens, cached_tokens, cost_nano FROM usage_records WHERE request_id = ${requestId}`;
    return row;
  }, 10_000);
}

/** What Gemini's usageMetadata bills, by the API's own rules. */
function billOf(u: {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
}): bigint {
  const cached = u.cachedContentTokenCount ?? 0;
  return expectedCostNano({
    input: (u.promptTokenCount ?? 0) - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
  });
}

let n = 0;
async function call(key: string, model: string, text: string, stream: boolean) {
  const requestId = `gm-bill-${++n}`;
  const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  const res = await fetch(`${gw.url}/v1beta/models/${model}:${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key, 'x-request-id': requestId },
    body: JSON.stringify({
      contents: [
        {
          role: 'user',
          parts: [{ text: `${text} — a prompt long enough to be cached in part, repeated. `.repeat(4) }],
        },
      ],
    }),
  });
  const body = await res.text();
  const last = stream ? JSON.parse(body.trim().split('\r\n\r\n').at(-1)!.slice(6)) : JSON.parse(body);
  return { status: res.status, usage: last.usageMetadata, row: await recordOf(requestId) };
}

t.test('charged exactly what usageMetadata bills, cached tokens and thoughts included', async (t) => {
  const u = await gw.user('1');
  for (const model of ['gm-model', 'oa-model', 'an-model']) {
    for (const stream of [false, true]) {
      for (const scenario of ['cached', 'thinking']) {
        const { status, usage, row } = await call(u.key, model, `[[${scenario}]]`, stream);
        const what = `${model} ${stream ? 'stream' : 'whole'} ${scenario}`;
        t.equal(status, 200, what);
        if (scenario === 'cached' && model !== 'an-model')
          t.ok(usage.cachedContentTokenCount > 0, `${what}: cached tokens reported`);
        if (scenario === 'thinking' && model === 'gm-model')
          t.ok(usage.thoughtsTokenCount > 0, `${what}: thoughts reported apart`);
        // Anthropic's cache writes (the fake's `cached` answer writes 10) cost more than input, and
        // Gemini's usage has no field for them: they are in promptTokenCount, billed at their price.
        const writes = model === 'an-model' && scenario === 'cached' ? 10n * (1250n - 1000n) : 0n;
        t.equal(
          row.cost_nano,
          billOf(usage) + writes,
          `${what}: charged ${row.cost_nano} = the bill of ${JSON.stringify(usage)}`,
        );
        t.equal(row.prompt_tokens, usage.promptTokenCount, `${what}: prompt tokens as reported`);
      }
    }
  }
  const [{ balance_nano }] = await sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${u.userId}`;
  t.ok(balance_nano > 0n, 'the balance stays positive');
});

t.test('a stream the client leaves is billed for what it produced', async (t) => {
  const u = await gw.user('1');
  for (const model of ['gm-model', 'oa-model']) {
    const requestId = `gm-abort-${model}`;
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': u.key, 'x-request-id': requestId },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'count slowly [[paced:200:20]]' }] }] }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/\r\n\r\n/g) ?? []).length < 5) seen += Buffer.from((await reader.read()).value!).toString();
    controller.abort();
    const row = await recordOf(requestId);
    t.equal(row.status, 499, `${model}: recorded as a client abort`);
    t.ok(
      row.completion_tokens >= 5 && row.completion_tokens < 200,
      `${model}: billed for the ${row.completion_tokens} tokens produced`,
    );
    t.equal(
      row.cost_nano,
      expectedCostNano({ input: row.prompt_tokens, output: row.completion_tokens, cacheRead: 0, cacheWrite: 0 }),
      `${model}: at their price`,
    );
  }
});

t.test('no usage from a Gemini upstream: the text produced is counted', async (t) => {
  const u = await gw.user('1');
  for (const stream of [false, true]) {
    const { row } = await call(u.key, 'gm-model', '[[no_usage:30]]', stream);
    t.equal(row.status, 200);
    t.ok(row.completion_tokens >= 30, `${stream ? 'stream' : 'whole'}: ${row.completion_tokens} output tokens counted`);
    t.ok(row.prompt_tokens > 0, 'and the input');
  }
});

t.test('the hold bounds the worst case, and a small balance is never overdrawn', async (t) => {
  // 1000 output tokens at $2/M and a short prompt: about $0.002 held per request.
  const u = await gw.user('0.0025');
  const results = await Promise.all(
    [1, 2, 3].map(() =>
      fetch(`${gw.url}/v1beta/models/gm-model:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': u.key },
        body: JSON.stringify({
          contents: [{ parts: [{ text: '[[fill]]' }] }],
          generationConfig: { maxOutputTokens: 1000 },
        }),
      }).then((r) => r.status),
    ),
  );
  t.ok(results.includes(402), `the hold refuses what the balance cannot cover (${results})`);
  await gw.services.outbox.drained();
  const [{ balance_nano }] = await sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${u.userId}`;
  t.ok(balance_nano >= 0n, `never below zero (${balance_nano})`);
  const held = await fetch(`${gw.url}/v1beta/models/gm-model:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': (await gw.user('0.0015')).key },
    body: JSON.stringify({
      contents: [{ parts: [{ text: 'hi' }] }],
      generationConfig: { maxOutputTokens: 500, thinkingConfig: { thinkingBudget: 500 } },
    }),
  });
  t.equal(held.status, 402, 'an explicit thinking budget is held for on top of the cap');
});
