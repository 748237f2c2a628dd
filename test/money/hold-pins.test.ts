// The exact hold of representative requests, each priced part of it pinned: a balance of exactly
// the hold is served, one nano-dollar less is refused. The expected figures are worked out here
// from the rule as docs/api.md ("Holds") states it, not from the gateway's code: the body's
// bytes, less image payloads, plus each image at the model's most, 4 tokens per object or array,
// 64 per request, 500 when tools are offered and 1,300 per typed Anthropic tool; at the dearest
// price an input token of it can be billed at; the output cap times the choices; per-call fees.

import t, { type Test } from 'tap';
import { nanoToUsd } from '../../src/billing/money.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    models: [
      {
        id: 'lc-model',
        context_window: 100000,
        max_output_tokens: 1000,
        ...PRICES,
        extras: { long_context: { threshold: 1000, pricing: { input: 2, output: 4 } } },
        routes: [{ provider: 'fake-anthropic', model: 'upstream-lc' }],
      },
      {
        id: 'small-window',
        context_window: 5000,
        max_output_tokens: 100,
        max_image_tokens: 900,
        ...PRICES,
        routes: [{ provider: 'fake-openai', model: 'upstream-sw' }],
      },
    ],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });

function containers(x: unknown): number {
  if (Array.isArray(x)) return 1 + x.reduce((n: number, v) => n + containers(v), 0);
  if (x !== null && typeof x === 'object') return 1 + Object.values(x).reduce((n: number, v) => n + containers(v), 0);
  return 0;
}

interface Parts {
  images?: { payloadChars: number; most?: number }[];
  tools?: boolean;
  typedTools?: number;
  /** nano-USD per input token and per output token. */
  inputNano?: bigint;
  outputNano?: bigint;
  outputTokens: number;
  feeNano?: bigint;
  window?: number;
}

/** Test prices: the dearest input token is a cache write at $1.25/M, output $2/M. */
function expectedHold(body: object, p: Parts): bigint {
  const bytes = Buffer.byteLength(JSON.stringify(body));
  const images = p.images ?? [];
  let input = bytes + 4 * containers(body) + 64 + (p.tools ? 500 : 0) + 1300 * (p.typedTools ?? 0);
  for (const img of images) input += (img.most ?? 2500) - img.payloadChars;
  if (p.window !== undefined) input = Math.min(input, p.window);
  // The test's prices are whole nano-dollars per token, so no rounding enters.
  return BigInt(input) * (p.inputNano ?? 1250n) + BigInt(p.outputTokens) * (p.outputNano ?? 2000n) + (p.feeNano ?? 0n);
}

async function status(path: string, balance: bigint, body: object): Promise<number> {
  const u = await gw.user(nanoToUsd(balance));
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function pin(t: Test, name: string, path: string, body: object, parts: Parts) {
  const hold = expectedHold(body, parts);
  t.equal(await status(path, hold, body), 200, `${name}: served on a balance of exactly its hold (${hold} nano)`);
  t.equal(await status(path, hold - 1n, body), 402, `${name}: refused one nano-dollar short of it`);
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

t.test('chat: text, the output cap', async (t) => {
  await pin(
    t,
    'plain',
    '/v1/chat/completions',
    { model: 'oa-model', max_tokens: 10, messages: [{ role: 'user', content: 'hello there' }] },
    { outputTokens: 10 },
  );
});

t.test('chat: an image where images go, n choices, a prediction', async (t) => {
  const url = `data:image/png;base64,${PNG}`;
  const body = {
    model: 'oa-model',
    max_tokens: 7,
    n: 3,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ],
  };
  await pin(t, 'image and n = 3', '/v1/chat/completions', body, {
    images: [{ payloadChars: url.length }],
    outputTokens: 21,
  });
  const prediction = { type: 'content', content: 'predicted text' };
  await pin(
    t,
    'a prediction: its bytes as output',
    '/v1/chat/completions',
    { ...body, n: 1, prediction },
    {
      images: [{ payloadChars: url.length }],
      outputTokens: 7 + Buffer.byteLength(JSON.stringify(prediction)),
    },
  );
});

t.test('messages: tools, a typed tool, an image in a tool result, web search fees', async (t) => {
  const body = {
    model: 'an-model',
    max_tokens: 20,
    tools: [
      {
        name: 'lookup',
        description: 'Looks a thing up.',
        input_schema: { type: 'object', properties: { q: { type: 'string' } } },
      },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ],
    messages: [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
          },
        ],
      },
    ],
  };
  // Three searches at $0.01 each.
  await pin(t, 'tools and fees', '/v1/messages', body, {
    tools: true,
    typedTools: 1,
    images: [{ payloadChars: PNG.length }],
    outputTokens: 20,
    feeNano: 30_000_000n,
  });
});

t.test('chat: web_search_options is a fee per request', async (t) => {
  await pin(
    t,
    'web search',
    '/v1/chat/completions',
    { model: 'oa-model', max_tokens: 5, web_search_options: {}, messages: [{ role: 'user', content: 'news?' }] },
    { outputTokens: 5, feeNano: 10_000_000n },
  );
});

t.test('long-context prices once the request may be long enough; base prices below', async (t) => {
  const short = { model: 'lc-model', max_tokens: 10, messages: [{ role: 'user', content: 'short' }] };
  await pin(t, 'below the threshold', '/v1/messages', short, { outputTokens: 10 });
  const long = { model: 'lc-model', max_tokens: 10, messages: [{ role: 'user', content: 'long '.repeat(300) }] };
  await pin(t, 'past the threshold', '/v1/messages', long, { outputTokens: 10, inputNano: 2000n, outputNano: 4000n });
});

t.test('a one-hour cache breakpoint: input at the one-hour write price', async (t) => {
  const body = {
    model: 'an-model',
    max_tokens: 10,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    messages: [{ role: 'user', content: 'hi' }],
  };
  await pin(t, 'one-hour cache', '/v1/messages', body, { outputTokens: 10, inputNano: 2000n });
});

t.test("the context window bounds the input; the model's own image maximum", async (t) => {
  await pin(
    t,
    'past the window',
    '/v1/chat/completions',
    { model: 'small-window', max_tokens: 10, messages: [{ role: 'user', content: 'x '.repeat(4000) }] },
    { outputTokens: 10, window: 5000 },
  );
  const url = `data:image/png;base64,${PNG}`;
  await pin(
    t,
    'an image on a model that bills at most 900 tokens for one',
    '/v1/chat/completions',
    {
      model: 'small-window',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    },
    { outputTokens: 10, images: [{ payloadChars: url.length, most: 900 }] },
  );
});

t.test('the books', async (t) => {
  await gw.services.outbox.drained();
  const report = await reconcile(gw.stores.sql, gw.stores.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'Redis agrees');
});
