// Options that cost more than plain tokens: sold at their catalogue price, or refused with a 400
// naming the field, never served at the token price. Unknown free fields still pass through.

import t, { type Test } from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { createKey } from '../../src/accounts/keys.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { compileCatalogue } from '../../src/catalogue/index.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    models: [
      {
        id: 'tier-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        ...PRICES,
        extras: { service_tiers: { priority: { input: 2, output: 4 } } },
        routes: [{ provider: 'fake-openai', model: 'upstream-tier' }],
      },
      {
        id: 'long-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        ...PRICES,
        extras: { long_context: { threshold: 200000, pricing: { input: 2, output: 3 } }, server_tools: ['web_fetch'] },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-long' }],
      },
      // Twins but for long-context prices past a small threshold (names of one length, so that
      // the same body weighs the same for either): $1/$2 per M below it, $4/$6 past it.
      {
        id: 'lc-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1 },
        extras: { long_context: { threshold: 3000, pricing: { input: 4, output: 6 } } },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-lc' }],
      },
      {
        id: 'pl-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1 },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-pl' }],
      },
      {
        // Priced at fast-mode rates by its operator, so it may send the beta.
        id: 'fast-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        pricing: { input: 6, output: 12 },
        extras: { priced_betas: ['fast-mode-*'] },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-fast' }],
      },
    ],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const u = await gw.user('5');
const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: u.key, maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: gw.url, apiKey: u.key, maxRetries: 0 });
const hi = [{ role: 'user' as const, content: 'hi' }];

async function lastRecord() {
  await gw.services.outbox.drained();
  const [row] = await gw.stores.sql<{ cost_nano: bigint; prompt_tokens: number; completion_tokens: number }[]>`
    SELECT cost_nano, prompt_tokens, completion_tokens FROM usage_records WHERE user_id = ${u.userId} ORDER BY id DESC LIMIT 1`;
  return row;
}

// A request's hold, seen for real: a key with a requests-per-minute limit holds per request in
// the store (no lease), and the fake upstream's [[slow]] keeps the request in flight while the
// store's reserved total is read. Only differences between holds are pinned below: the input
// estimate is the gateway's to change, what an option adds on top of it is not.
// A user of its own, so that no lease of the other tests' key counts in its reserved total.
const holder = await gw.user('5');
const held = await createKey(gw.stores.sql, holder.userId, 'per-request holds', { rpm: 100_000 });
const SLOW = '[[slow:400]]';

async function holdOf(
  t: Test,
  path: '/v1/chat/completions' | '/v1/messages',
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<bigint> {
  t.equal((await gw.stores.hot.balance(holder.userId))?.reserved ?? 0n, 0n, 'nothing held before');
  const answer = fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${held.key}`,
      'anthropic-version': '2023-06-01',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const reserved = await eventually(async () => (await gw.stores.hot.balance(holder.userId))?.reserved ?? 0n, 3000, 5);
  const res = await answer;
  const text = await res.text();
  t.equal(res.status, 200, `answered: ${text.slice(0, 200)}`);
  t.equal((await gw.stores.hot.balance(holder.userId))?.reserved, 0n, 'released once answered');
  return reserved;
}

const slowMessages = (model: string, extra: Record<string, unknown> = {}, content = `hi ${SLOW}`) => ({
  model,
  max_tokens: 100,
  messages: [{ role: 'user', content }],
  ...extra,
});

async function refusal(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err as { status?: number; param?: string; error?: any; message: string } | null;
}

t.test(
  'service_tier: a priced tier at its prices, an unpriced dear one refused, cheaper ones at the base price',
  async (t) => {
    const denied = await refusal(
      openai.chat.completions.create({ model: 'oa-model', service_tier: 'priority', messages: hi }),
    );
    t.equal(denied?.status, 400);
    t.equal(denied?.param, 'service_tier');
    t.match(
      denied?.message,
      /service_tier: service_tier "priority" costs more than plain tokens and is not offered on "oa-model"/,
    );

    fake.reset();
    await openai.chat.completions.create({ model: 'tier-model', service_tier: 'priority', messages: hi });
    t.equal(fake.requests.at(-1)!.body.service_tier, 'priority', 'forwarded where it is sold');
    const r = await lastRecord();
    t.equal(
      r.cost_nano,
      BigInt(r.prompt_tokens) * 2000n + BigInt(r.completion_tokens) * 4000n,
      "charged at the tier's prices",
    );

    for (const tier of ['auto', 'default', 'flex'] as const) {
      await openai.chat.completions.create({ model: 'oa-model', service_tier: tier, messages: hi });
      const b = await lastRecord();
      t.equal(
        b.cost_nano,
        BigInt(b.prompt_tokens) * 1000n + BigInt(b.completion_tokens) * 2000n,
        `${tier}: the base price`,
      );
    }
  },
);

t.test('web search: a per-search price where it is sold, refused where it is not', async (t) => {
  const denied = await refusal(
    openai.chat.completions.create({ model: 'fallback-model', web_search_options: {}, messages: hi } as any),
  );
  t.equal(denied?.param, 'web_search_options');
  await openai.chat.completions.create({ model: 'oa-model', web_search_options: {}, messages: hi } as any);
  const r = await lastRecord();
  t.equal(
    r.cost_nano,
    BigInt(r.prompt_tokens) * 1000n + BigInt(r.completion_tokens) * 2000n + 10_000_000n,
    'tokens plus $0.01 for the search',
  );

  await anthropic.messages.create({
    model: 'an-model',
    max_tokens: 50,
    messages: hi,
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
  } as any);
  const s = await lastRecord();
  t.equal(
    s.cost_nano,
    BigInt(s.prompt_tokens) * 1000n + BigInt(s.completion_tokens) * 2000n + 10_000_000n,
    'the searches the upstream reports, at $0.01 each',
  );
});

t.test(
  'Anthropic server-side features: refused (or, for a declared tool, taken out) unless the model accepts them',
  async (t) => {
    const mcp = await refusal(
      anthropic.messages.create({
        model: 'an-model',
        max_tokens: 50,
        messages: hi,
        mcp_servers: [{ type: 'url', url: 'https://mcp.example.test', name: 'x' }],
      } as any),
    );
    t.match(mcp?.error?.error?.message, /^mcp_servers: Remote MCP servers costs more/);
    const container = await refusal(
      anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, container: 'container_1' } as any),
    );
    t.match(container?.error?.error?.message, /^container: /);
    const fetchTool = { type: 'web_fetch_20250910', name: 'web_fetch' };
    const fn = { name: 'get_time', description: 'The time.', input_schema: { type: 'object', properties: {} } };
    fake.reset();
    const dropped = await anthropic.messages
      .create({ model: 'an-model', max_tokens: 50, messages: hi, tools: [fetchTool, fn] } as any)
      .withResponse();
    t.same(fake.requests.at(-1)!.body.tools, [fn], 'a server tool the model does not sell is taken out, the rest sent');
    t.equal(dropped.response.headers.get('x-airouter-dropped-tools'), 'web_fetch_20250910', 'and the answer names it');
    const forced = await refusal(
      anthropic.messages.create({
        model: 'an-model',
        max_tokens: 50,
        messages: hi,
        tools: [fetchTool, fn],
        tool_choice: { type: 'tool', name: 'web_fetch' },
      } as any),
    );
    t.match(
      forced?.error?.error?.message,
      /^tool_choice: The server tool "web_fetch"/,
      'a tool_choice that insists on it is refused',
    );
    fake.reset();
    await anthropic.messages.create({ model: 'long-model', max_tokens: 50, messages: hi, tools: [fetchTool] } as any, {
      headers: { 'anthropic-beta': 'web-fetch-2025-09-10' },
    });
    t.same(fake.requests.at(-1)!.body.tools, [fetchTool], 'accepted where the catalogue allows it');
    t.equal(fake.requests.at(-1)!.headers['anthropic-beta'], 'web-fetch-2025-09-10', 'with its beta');
  },
);

/** The dearest input token at the test prices: a cache write, $1.25/M. */
const INPUT_NANO = 1250n;

t.test(
  'client-side tools (bash, text editor, computer, memory) are plain tokens: forwarded, held and charged as such',
  async (t) => {
    const tools = [
      { type: 'bash_20250124', name: 'bash' },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
      { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
      { type: 'memory_20250818', name: 'memory' },
    ];
    fake.reset();
    const answer = await anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, tools } as any);
    t.equal(answer.type, 'message', 'answered');
    t.same(fake.requests.at(-1)!.body.tools, tools, 'forwarded with the tools as sent');
    const r = await lastRecord();
    t.equal(
      r.cost_nano,
      BigInt(r.prompt_tokens) * 1000n + BigInt(r.completion_tokens) * 2000n,
      'charged the tokens, nothing per call',
    );
    // The same bytes under a field name of the same length, which is forwarded but is no tool:
    // what the tools add beyond their bytes is tokens (the tool-use prompt, 500, and each typed
    // tool's own system prompt, 1,300: docs/api.md "Holds") at the dearest input price, no fee.
    const withTools = await holdOf(t, '/v1/messages', slowMessages('an-model', { tools }));
    const sameBytes = await holdOf(t, '/v1/messages', slowMessages('an-model', { toolz: tools }));
    t.ok(withTools > 0n, `held ${withTools}`);
    t.equal(
      withTools - sameBytes,
      (500n + 4n * 1300n) * INPUT_NANO,
      "the hold has no fee for them, only their prompts' tokens",
    );
  },
);

t.test('server-tool fees are held: max_uses × the per-call price, web_search_options its price', async (t) => {
  const PER_CALL = 10_000_000n; // $0.01
  const search = (max_uses?: number) => ({
    type: 'web_search_20250305',
    name: 'web_search',
    ...(max_uses === undefined ? {} : { max_uses }),
  });
  // max_uses 5 and 1 weigh the same bytes: the holds differ by exactly four searches.
  const five = await holdOf(t, '/v1/messages', slowMessages('an-model', { tools: [search(5)] }));
  const one = await holdOf(t, '/v1/messages', slowMessages('an-model', { tools: [search(1)] }));
  t.equal(five - one, 4n * PER_CALL, 'max_uses 5 holds four searches more than max_uses 1');
  // The tool against the same bytes under another field: the whole fee, max_uses × the price.
  const none = await holdOf(t, '/v1/messages', slowMessages('an-model', { toolz: [search(5)] }));
  const toolPrompt = 500n * INPUT_NANO;
  t.equal(
    five - none,
    5n * PER_CALL + toolPrompt,
    'the tool with max_uses 5 holds five searches on top of its bytes and the tool prompt',
  );
  // Unbounded: the catalogue's max_calls (5 by default) is held. No max_uses is fewer bytes
  // than `"max_uses":5`, so it is compared with a tool of the same size that bounds nothing.
  const unbounded = await holdOf(
    t,
    '/v1/messages',
    slowMessages('an-model', { tools: [{ ...search(), max_usez: 5 }] }),
  );
  t.equal(unbounded - none, 5n * PER_CALL + toolPrompt, 'no max_uses: max_calls searches held');

  // OpenAI web_search_options: its price once, against a field of the same length.
  const chat = (extra: Record<string, unknown>) => ({
    model: 'oa-model',
    max_tokens: 100,
    messages: [{ role: 'user', content: `hi ${SLOW}` }],
    ...extra,
  });
  const withSearch = await holdOf(
    t,
    '/v1/chat/completions',
    chat({ web_search_options: { search_context_size: 'low' } }),
  );
  const without = await holdOf(t, '/v1/chat/completions', chat({ web_search_optionz: { search_context_size: 'low' } }));
  t.equal(withSearch - without, PER_CALL, 'web_search_options holds one search on top of its bytes');
});

t.test('long context: past the threshold the hold is priced at the long-context prices', async (t) => {
  // Below the threshold (3,000 tokens; "hi" is far below it however input is counted), the
  // twins hold the same. Past it (18,000 bytes: 6,000 tokens at one per 3 bytes, more if input
  // is counted closer), the output part is priced at $6/M rather than $2/M and the input part
  // at $4/M rather than $1/M.
  const long = `${'x'.repeat(18_000)} ${SLOW}`;
  // Caps of as many digits, so that the two bodies weigh the same.
  const holds = async (model: string, content: string) => ({
    cap100: await holdOf(t, '/v1/messages', { ...slowMessages(model, {}, content), max_tokens: 100 }),
    cap900: await holdOf(t, '/v1/messages', { ...slowMessages(model, {}, content), max_tokens: 900 }),
  });
  const shortLc = await holds('lc-model', `hi ${SLOW}`);
  const shortPl = await holds('pl-model', `hi ${SLOW}`);
  t.same(shortLc, shortPl, 'below the threshold: the base prices');
  t.equal(shortLc.cap900 - shortLc.cap100, 800n * 2000n, 'output held at $2/M');

  const longLc = await holds('lc-model', long);
  const longPl = await holds('pl-model', long);
  t.equal(longPl.cap900 - longPl.cap100, 800n * 2000n, 'without long-context pricing: output at $2/M');
  t.equal(longLc.cap900 - longLc.cap100, 800n * 6000n, 'past the threshold: output held at the long-context $6/M');
  const inputLc = longLc.cap100 - 100n * 6000n;
  const inputPl = longPl.cap100 - 100n * 2000n;
  t.ok(inputPl >= 6000n * 1000n, `the input part is held for at least 6,000 tokens (${inputPl})`);
  t.equal(inputLc, 4n * inputPl, 'and past the threshold at $4/M: four times the base $1/M');
});

t.test('anthropic-beta: passed through, bar the priced ones a model does not sell', async (t) => {
  fake.reset();
  const denied = await refusal(
    anthropic.messages.create(
      { model: 'an-model', max_tokens: 50, messages: hi },
      { headers: { 'anthropic-beta': 'claude-code-20250219,context-1m-2025-08-07' } },
    ),
  );
  t.equal(denied?.status, 400);
  t.equal(denied?.error?.type, 'error', 'in the Anthropic envelope');
  t.equal(denied?.error?.error?.type, 'invalid_request_error');
  t.match(
    denied?.error?.error?.message,
    /^anthropic-beta: The context-1m-2025-08-07 beta \(long-context pricing\) costs more than plain tokens and is not offered on "an-model"/,
  );
  const fast = await refusal(
    anthropic.messages.create(
      { model: 'an-model', max_tokens: 50, messages: hi },
      { headers: { 'anthropic-beta': 'some-new-beta-2031-01-01, fast-mode-2026-02-01' } },
    ),
  );
  t.equal(fast?.status, 400);
  t.match(
    fast?.error?.error?.message,
    /^anthropic-beta: The fast-mode-2026-02-01 beta \(listed in ANTHROPIC_PRICED_BETAS\) costs more than plain tokens and is not offered on "an-model"/,
    'the message names the beta',
  );
  t.equal(fake.requests.length, 0, 'neither reached the upstream');

  await anthropic.messages.create(
    { model: 'long-model', max_tokens: 50, messages: hi },
    { headers: { 'anthropic-beta': 'context-1m-2025-08-07,some-new-beta-2031-01-01' } },
  );
  t.equal(
    fake.requests.at(-1)!.headers['anthropic-beta'],
    'context-1m-2025-08-07,some-new-beta-2031-01-01',
    'long context where it is priced, and a beta the gateway has never heard of',
  );
  await anthropic.messages.create(
    { model: 'fast-model', max_tokens: 50, messages: hi },
    { headers: { 'anthropic-beta': 'fast-mode-2026-02-01' } },
  );
  t.equal(
    fake.requests.at(-1)!.headers['anthropic-beta'],
    'fast-mode-2026-02-01',
    'a priced beta where the catalogue entry covers it',
  );
  const r = await lastRecord();
  t.equal(
    r.cost_nano,
    BigInt(r.prompt_tokens) * 6000n + BigInt(r.completion_tokens) * 12000n,
    "at that entry's prices",
  );

  // Fast mode asked for in the body, as models that need no beta for it take it.
  const speed = await refusal(
    anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, speed: 'fast' } as any),
  );
  t.equal(speed?.status, 400, 'speed: fast on a model not priced for it is refused');
  t.match(speed?.error?.error?.message, /^speed: speed "fast" costs more than plain tokens/, 'naming the field');
  await anthropic.messages.create({ model: 'fast-model', max_tokens: 50, messages: hi, speed: 'fast' } as any);
  t.equal(fake.requests.at(-1)!.body.speed, 'fast', 'and forwarded where the entry is priced for fast mode');
  await anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, speed: 'standard' } as any);
  t.equal(fake.requests.at(-1)!.body.speed, 'standard', 'the standard speed is plain tokens');

  const fetchBeta = await anthropic.messages.create(
    { model: 'an-model', max_tokens: 50, messages: hi },
    {
      headers: {
        'anthropic-beta':
          'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25,advanced-tool-use-2025-11-20',
      },
    },
  );
  t.ok(fetchBeta.id);
  t.equal(
    fake.requests.at(-1)!.headers['anthropic-beta'],
    'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25,advanced-tool-use-2025-11-20',
    'feature betas pass: the body is what uses, and pays for, the feature',
  );
  // What those betas unlock is in the body, and that is still refused where it is not sold.
  const headers = { 'anthropic-beta': 'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25' };
  fake.reset();
  await anthropic.messages.create(
    {
      model: 'an-model',
      max_tokens: 50,
      messages: hi,
      tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }],
    } as any,
    { headers },
  );
  t.notOk('tools' in fake.requests.at(-1)!.body, 'the tool a beta unlocks is not sent where it is not sold');
  const mcp = await refusal(
    anthropic.messages.create(
      {
        model: 'an-model',
        max_tokens: 50,
        messages: hi,
        mcp_servers: [{ type: 'url', url: 'https://mcp.example.test', name: 'x' }],
      } as any,
      { headers },
    ),
  );
  t.match(mcp?.error?.error?.message, /^mcp_servers: Remote MCP servers/);
  const container = await refusal(
    anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, container: 'cntr_1' } as any, {
      headers,
    }),
  );
  t.match(container?.error?.error?.message, /^container: A code execution container/);
});

t.test('catalogue: priced_betas are beta names or prefixes ending in *', async (t) => {
  const withBetas = (priced_betas: string[]) => ({
    ...catalogue,
    models: [{ ...(catalogue.models[1] as object), extras: { priced_betas } }],
  });
  t.same(
    compileCatalogue(withBetas(['fast-mode-*', 'some-beta-2030-01-01']), 'test').models.get('an-model')!.pricedBetas,
    ['fast-mode-*', 'some-beta-2030-01-01'],
  );
  t.throws(
    () => compileCatalogue(withBetas(['fast mode']), 'test'),
    /priced_betas.*must be a beta name or a prefix ending in \*/,
  );
  t.throws(() => compileCatalogue(withBetas(['fast-*-mode']), 'test'), /must be a beta name or a prefix ending in \*/);
});

t.test('count_tokens: a priced beta is refused there too', async (t) => {
  fake.reset();
  const res = await fetch(`${gw.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'x-api-key': u.key, 'content-type': 'application/json', 'anthropic-beta': 'fast-mode-2026-02-01' },
    body: JSON.stringify({ model: 'an-model', messages: hi }),
  });
  t.equal(res.status, 400);
  t.match(((await res.json()) as any).error.message, /fast-mode-2026-02-01/);
  t.equal(fake.requests.length, 0);
});

t.test('audio: refused where it is not sold', async (t) => {
  const part = await refusal(
    openai.chat.completions.create({
      model: 'oa-model',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'listen' },
            { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          ],
        },
      ],
    }),
  );
  t.equal(part?.param, 'messages[0].content[1]');
  const out = await refusal(
    openai.chat.completions.create({
      model: 'oa-model',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'wav' },
      messages: hi,
    }),
  );
  t.equal(out?.status, 400);
  t.equal(out?.param, 'audio');
});

t.test('unknown free fields still pass through', async (t) => {
  fake.reset();
  await openai.chat.completions.create({
    model: 'oa-model',
    messages: hi,
    store: false,
    metadata: { a: 'b' },
    seed: 7,
    some_future_field: { x: 1 },
  } as any);
  t.match(fake.requests.at(-1)!.body, { store: false, metadata: { a: 'b' }, seed: 7, some_future_field: { x: 1 } });
  await gw.services.outbox.drained();
  const report = await reconcile(gw.stores.sql, gw.stores.hot);
  t.equal(report.ok, true, 'the ledger reconciles after all of the above');
});
