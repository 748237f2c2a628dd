// The console's "test" of a provider: one real call per key, as small as the vendor takes (a
// one-word prompt, a few output tokens; one input for an embedding model), through the same pool
// and the same dialect code as a client's request. Its cost is the operator's: nobody is billed.

import { DIALECTS } from '../dialects/index.js';
import { embeddingsUpstream } from '../dialects/embeddings.js';
import type { DialectLimits } from '../dialects/dialect.js';
import type { Provider } from '../catalogue/index.js';
import { addProviderHeaders } from './provider-keys.js';
import { errorMessageOf } from './router.js';
import type { UpstreamClient } from './client.js';

export interface ProbeResult {
  ok: boolean;
  /** The vendor's status; null when no answer came. */
  status: number | null;
  latency_ms: number;
  message: string;
}

/** Output tokens asked for: enough for models that refuse a cap of 1, little enough to cost nothing. */
const PROBE_OUTPUT = 16;

export async function probeProvider(
  client: UpstreamClient,
  provider: Provider,
  upstreamModel: string,
  embedding: boolean,
  key: string | undefined,
  limits: DialectLimits,
): Promise<ProbeResult> {
  const { url, headers, body }: { url: string; headers: Record<string, string>; body: string } = embedding
    ? embeddingCall(provider, upstreamModel, key)
    : chatCall(provider, upstreamModel, key, limits);
  addProviderHeaders(headers, provider);
  const started = performance.now();
  try {
    const res = await client.post(url, headers, body);
    const text = await res.body.text().catch(() => '');
    const latency = Math.round(performance.now() - started);
    if (res.status < 400)
      return { ok: true, status: res.status, latency_ms: latency, message: 'The provider answered.' };
    const said = errorMessageOf(text);
    return {
      ok: false,
      status: res.status,
      latency_ms: latency,
      message: said ? said.slice(0, 300) : `The provider answered with status ${res.status}.`,
    };
  } catch (err) {
    return {
      ok: false,
      status: null,
      latency_ms: Math.round(performance.now() - started),
      message: `No answer: ${(err as Error).message.slice(0, 200)}`,
    };
  }
}

function chatCall(provider: Provider, model: string, key: string | undefined, limits: DialectLimits) {
  const dialect = DIALECTS[provider.dialect];
  const request = dialect.buildRequest(
    {
      model,
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say OK.' }] }],
      stream: false,
      includeUsage: false,
      maxTokens: PROBE_OUTPUT,
    },
    model,
  );
  dialect.upstream.setOutputCap(request, PROBE_OUTPUT, provider, model);
  return {
    url: dialect.upstream.endpoint(provider.baseUrl, { model, stream: false }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...dialect.upstream.headers(key, undefined, limits),
    },
    body: JSON.stringify(request),
  };
}

function embeddingCall(provider: Provider, model: string, key: string | undefined) {
  const adapter = embeddingsUpstream(provider.dialect);
  if (!adapter) throw new Error(`dialect ${provider.dialect} has no embeddings endpoint`);
  const request = {
    body: { model, input: 'OK' },
    inputs: ['OK'],
    tokenInputs: false,
    encodingFormat: 'float' as const,
  };
  return {
    url: adapter.endpoint(provider.baseUrl, model),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...adapter.headers(key) },
    body: JSON.stringify(adapter.body(request, model)),
  };
}
