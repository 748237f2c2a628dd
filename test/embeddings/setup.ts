// The embeddings tests' catalogue: the standard test catalogue (chat models on the fake
// upstream) plus embedding models on the fake's OpenAI and Gemini endpoints, and a few whose
// upstream model names pick the fake's scenarios (errors, replays of recorded answers).

import type { Test } from 'tap';
import type { Logger } from '../../src/log.js';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway, testCatalogue, type TestGateway } from '../helpers/gateway.js';

process.env.FAKE_GEMINI_KEY ??= 'fake-gemini-provider-key-0003';

/** USD per million input tokens: 100 nano-dollars a token, 130 at the vendor's list price. */
export const EMBED_PRICES = { pricing: { input: 0.1 }, official_pricing: { input: 0.13 } };
export const NANO_PER_TOKEN = 100n;
export const OFFICIAL_NANO_PER_TOKEN = 130n;

const embedding = (id: string, routes: { provider: string; model: string }[], more: Record<string, unknown> = {}) => ({
  id,
  kind: 'embedding',
  owned_by: 'fake',
  context_window: 8192,
  ...EMBED_PRICES,
  ...more,
  routes,
});

export function embeddingsCatalogue(upstream: string) {
  return testCatalogue({
    upstream,
    extra: {
      providers: [{ id: 'fake-gemini', dialect: 'gemini', base_url: upstream, api_key: { env: 'FAKE_GEMINI_KEY' } }],
      models: [
        embedding('emb-model', [{ provider: 'fake-openai', model: 'upstream-emb' }], { dimensions: 64 }),
        embedding('emb-gemini', [{ provider: 'fake-gemini', model: 'gemini-embedding-001' }], { dimensions: 3072 }),
        // The first route fails (the fake answers 500 for this model name), the second serves.
        embedding('emb-fallback', [
          { provider: 'fake-openai', model: 'error:500' },
          { provider: 'fake-openai', model: 'upstream-emb' },
        ]),
        embedding('emb-ratelimited', [
          { provider: 'fake-openai', model: 'error:429' },
          { provider: 'fake-gemini', model: 'gemini-embedding-001' },
        ]),
        // Gemini first: token-id inputs can only go to the OpenAI route.
        embedding('emb-mixed', [
          { provider: 'fake-gemini', model: 'gemini-embedding-001' },
          { provider: 'fake-openai', model: 'upstream-emb' },
        ]),
        embedding('emb-replay', [{ provider: 'fake-openai', model: 'replay:openai/embeddings/float.json' }]),
        embedding('emb-replay-b64', [{ provider: 'fake-openai', model: 'replay:openai/embeddings/base64.json' }]),
        embedding('emb-gemini-replay', [
          { provider: 'fake-gemini', model: 'replay:gemini/batch_embed_contents_256d.json' },
        ]),
        embedding('emb-gemini-missing', [{ provider: 'fake-gemini', model: 'error:404' }]),
        embedding('emb-upstream-400', [{ provider: 'fake-openai', model: 'error:400' }]),
      ],
    },
  });
}

export async function startEmbeddings(
  t: Test,
  opts: { env?: Record<string, string>; log?: Logger } = {},
): Promise<{ fake: FakeUpstream; gw: TestGateway }> {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startTestGateway(t, { upstream: fake.url, catalogue: embeddingsCatalogue(fake.url), ...opts });
  return { fake, gw };
}

/** POST /v1/embeddings with a bearer key; the answer's status and JSON. */
export async function embed(
  gw: TestGateway,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
