// Options that cost more than plain tokens: sold at their catalogue price, or refused with a 400
// naming the field, never served at the token price. Unknown free fields still pass through.

import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { reconcile } from '../../src/billing/reconcile.js';
import { compileCatalogue } from '../../src/catalogue/index.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    models: [
      {
        id: 'tier-model', owned_by: 'fake', max_output_tokens: 1000, ...PRICES,
        extras: { service_tiers: { priority: { input: 2, output: 4 } } },
        routes: [{ provider: 'fake-openai', model: 'upstream-tier' }],
      },
      {
        id: 'long-model', owned_by: 'fake', max_output_tokens: 1000, ...PRICES,
        extras: { long_context: { threshold: 200000, pricing: { input: 2, output: 3 } }, server_tools: ['web_fetch'] },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-long' }],
      },
      {
        // Priced at fast-mode rates by its operator, so it may send the beta.
        id: 'fast-model', owned_by: 'fake', max_output_tokens: 1000, pricing: { input: 6, output: 12 },
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
  await gw.gw.outbox.drained();
  const [row] = await gw.stores.sql<{ cost_nano: bigint; prompt_tokens: number; completion_tokens: number }[]>`
    SELECT cost_nano, prompt_tokens, completion_tokens FROM usage_records WHERE user_id = ${u.userId} ORDER BY id DESC LIMIT 1`;
  return row;
}

async function refusal(p: Promise<unknown>) {
  const err = await p.then(() => null, (e: unknown) => e);
  return err as { status?: number; param?: string; error?: any; message: string } | null;
}

t.test('service_tier: a priced tier at its prices, an unpriced dear one refused, cheaper ones at the base price', async (t) => {
  const denied = await refusal(openai.chat.completions.create({ model: 'oa-model', service_tier: 'priority', messages: hi }));
  t.equal(denied?.status, 400);
  t.equal(denied?.param, 'service_tier');
  t.match(denied?.message, /service_tier: service_tier "priority" costs more than plain tokens and is not offered on "oa-model"/);

  fake.reset();
  await openai.chat.completions.create({ model: 'tier-model', service_tier: 'priority', messages: hi });
  t.equal(fake.requests.at(-1)!.body.service_tier, 'priority', 'forwarded where it is sold');
  const r = await lastRecord();
  t.equal(r.cost_nano, BigInt(r.prompt_tokens) * 2000n + BigInt(r.completion_tokens) * 4000n, 'charged at the tier\'s prices');

  for (const tier of ['auto', 'default', 'flex'] as const) {
    await openai.chat.completions.create({ model: 'oa-model', service_tier: tier, messages: hi });
    const b = await lastRecord();
    t.equal(b.cost_nano, BigInt(b.prompt_tokens) * 1000n + BigInt(b.completion_tokens) * 2000n, `${tier}: the base price`);
  }
});

t.test('web search: a per-search price where it is sold, refused where it is not', async (t) => {
  const denied = await refusal(openai.chat.completions.create({ model: 'fallback-model', web_search_options: {}, messages: hi } as any));
  t.equal(denied?.param, 'web_search_options');
  await openai.chat.completions.create({ model: 'oa-model', web_search_options: {}, messages: hi } as any);
  const r = await lastRecord();
  t.equal(r.cost_nano, BigInt(r.prompt_tokens) * 1000n + BigInt(r.completion_tokens) * 2000n + 10_000_000n, 'tokens plus $0.01 for the search');

  await anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }] } as any);
  const s = await lastRecord();
  t.equal(s.cost_nano, BigInt(s.prompt_tokens) * 1000n + BigInt(s.completion_tokens) * 2000n + 10_000_000n, 'the searches the upstream reports, at $0.01 each');
});

t.test('Anthropic server-side features: refused unless the model accepts them', async (t) => {
  const mcp = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, mcp_servers: [{ type: 'url', url: 'https://mcp.example.test', name: 'x' }] } as any));
  t.match(mcp?.error?.error?.message, /^mcp_servers: Remote MCP servers costs more/);
  const container = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, container: 'container_1' } as any));
  t.match(container?.error?.error?.message, /^container: /);
  const fetchTool = { type: 'web_fetch_20250910', name: 'web_fetch' };
  const denied = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, tools: [fetchTool] } as any));
  t.match(denied?.error?.error?.message, /^tools\.0\.type: The server tool "web_fetch_20250910"/);
  fake.reset();
  await anthropic.messages.create({ model: 'long-model', max_tokens: 50, messages: hi, tools: [fetchTool] } as any, { headers: { 'anthropic-beta': 'web-fetch-2025-09-10' } });
  t.same(fake.requests.at(-1)!.body.tools, [fetchTool], 'accepted where the catalogue allows it');
  t.equal(fake.requests.at(-1)!.headers['anthropic-beta'], 'web-fetch-2025-09-10', 'with its beta');
  await anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, tools: [{ type: 'bash_20250124', name: 'bash' }] } as any);
  t.pass('client-side tools (bash, text editor, computer, memory) are plain tokens');
});

t.test('anthropic-beta: passed through, bar the priced ones a model does not sell', async (t) => {
  fake.reset();
  const denied = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi }, { headers: { 'anthropic-beta': 'claude-code-20250219,context-1m-2025-08-07' } }));
  t.equal(denied?.status, 400);
  t.equal(denied?.error?.type, 'error', 'in the Anthropic envelope');
  t.equal(denied?.error?.error?.type, 'invalid_request_error');
  t.match(denied?.error?.error?.message, /^anthropic-beta: The context-1m-2025-08-07 beta \(long-context pricing\) costs more than plain tokens and is not offered on "an-model"/);
  const fast = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi }, { headers: { 'anthropic-beta': 'some-new-beta-2031-01-01, fast-mode-2026-02-01' } }));
  t.equal(fast?.status, 400);
  t.match(fast?.error?.error?.message, /^anthropic-beta: The fast-mode-2026-02-01 beta \(listed in ANTHROPIC_PRICED_BETAS\) costs more than plain tokens and is not offered on "an-model"/, 'the message names the beta');
  t.equal(fake.requests.length, 0, 'neither reached the upstream');

  await anthropic.messages.create({ model: 'long-model', max_tokens: 50, messages: hi }, { headers: { 'anthropic-beta': 'context-1m-2025-08-07,some-new-beta-2031-01-01' } });
  t.equal(fake.requests.at(-1)!.headers['anthropic-beta'], 'context-1m-2025-08-07,some-new-beta-2031-01-01', 'long context where it is priced, and a beta the gateway has never heard of');
  await anthropic.messages.create({ model: 'fast-model', max_tokens: 50, messages: hi }, { headers: { 'anthropic-beta': 'fast-mode-2026-02-01' } });
  t.equal(fake.requests.at(-1)!.headers['anthropic-beta'], 'fast-mode-2026-02-01', 'a priced beta where the catalogue entry covers it');
  const r = await lastRecord();
  t.equal(r.cost_nano, BigInt(r.prompt_tokens) * 6000n + BigInt(r.completion_tokens) * 12000n, 'at that entry\'s prices');

  const fetchBeta = await anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi }, { headers: { 'anthropic-beta': 'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25,advanced-tool-use-2025-11-20' } });
  t.ok(fetchBeta.id);
  t.equal(fake.requests.at(-1)!.headers['anthropic-beta'], 'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25,advanced-tool-use-2025-11-20', 'feature betas pass: the body is what uses, and pays for, the feature');
  // What those betas unlock is in the body, and that is still refused where it is not sold.
  const headers = { 'anthropic-beta': 'web-fetch-2025-09-10,mcp-client-2025-11-20,code-execution-2025-08-25' };
  const tool = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] } as any, { headers }));
  t.match(tool?.error?.error?.message, /^tools\.0\.type: The server tool "web_fetch_20250910"/);
  const mcp = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, mcp_servers: [{ type: 'url', url: 'https://mcp.example.test', name: 'x' }] } as any, { headers }));
  t.match(mcp?.error?.error?.message, /^mcp_servers: Remote MCP servers/);
  const container = await refusal(anthropic.messages.create({ model: 'an-model', max_tokens: 50, messages: hi, container: 'cntr_1' } as any, { headers }));
  t.match(container?.error?.error?.message, /^container: A code execution container/);
});

t.test('catalogue: priced_betas are beta names or prefixes ending in *', async (t) => {
  const withBetas = (priced_betas: string[]) => ({ ...catalogue, models: [{ ...(catalogue.models[1] as object), extras: { priced_betas } }] });
  t.same(compileCatalogue(withBetas(['fast-mode-*', 'some-beta-2030-01-01']), 'test').models.get('an-model')!.pricedBetas, ['fast-mode-*', 'some-beta-2030-01-01']);
  t.throws(() => compileCatalogue(withBetas(['fast mode']), 'test'), /priced_betas.*must be a beta name or a prefix ending in \*/);
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
  const part = await refusal(openai.chat.completions.create({ model: 'oa-model', messages: [{ role: 'user', content: [{ type: 'text', text: 'listen' }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }));
  t.equal(part?.param, 'messages[0].content[1]');
  const out = await refusal(openai.chat.completions.create({ model: 'oa-model', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: hi }));
  t.equal(out?.status, 400);
  t.equal(out?.param, 'audio');
});

t.test('unknown free fields still pass through', async (t) => {
  fake.reset();
  await openai.chat.completions.create({ model: 'oa-model', messages: hi, store: false, metadata: { a: 'b' }, seed: 7, some_future_field: { x: 1 } } as any);
  t.match(fake.requests.at(-1)!.body, { store: false, metadata: { a: 'b' }, seed: 7, some_future_field: { x: 1 } });
  await gw.gw.outbox.drained();
  const report = await reconcile(gw.stores.sql, gw.stores.hot);
  t.equal(report.ok, true, 'the ledger reconciles after all of the above');
});
