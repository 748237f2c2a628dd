// An OpenAI-compatible provider's /embeddings, for POST /v1/embeddings. The client speaks
// OpenAI's embeddings API too, so its body goes through untouched bar `model`: `dimensions`,
// `encoding_format` and `user` are the vendor's to honour, and a field the gateway does not know
// reaches it as it would have without the gateway. What comes back may be floats or base64
// whatever was asked (compatible servers differ): the handler turns it into what the client asked.

import type { EmbeddingsUpstream, UpstreamEmbeddings } from '../dialect.js';

const isRecord = (x: unknown): x is Record<string, any> => x !== null && typeof x === 'object' && !Array.isArray(x);
const isVector = (x: unknown): x is number[] | string =>
  typeof x === 'string' || (Array.isArray(x) && x.every((n) => typeof n === 'number'));

function parse(json: unknown): UpstreamEmbeddings | undefined {
  if (!isRecord(json) || !Array.isArray(json.data)) return undefined;
  const vectors: (number[] | string)[] = [];
  for (const [i, item] of json.data.entries()) {
    if (!isRecord(item) || !isVector(item.embedding)) return undefined;
    // `index` says which input a vector is for; servers that leave it out answer in order.
    const at = Number.isInteger(item.index) ? item.index : i;
    if (at < 0 || at >= json.data.length || vectors[at] !== undefined) return undefined;
    vectors[at] = item.embedding;
  }
  const prompt = isRecord(json.usage) ? json.usage.prompt_tokens : undefined;
  return { vectors, promptTokens: Number.isInteger(prompt) && prompt >= 0 ? prompt : null };
}

export const openaiEmbeddings: EmbeddingsUpstream = {
  // OpenAI's own limit; compatible servers that take fewer answer 400, which the client sees.
  maxInputs: 2048,
  takesTokens: true,
  endpoint: (baseUrl) => `${baseUrl}/embeddings`,
  headers: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  body: (req, upstreamModel) => ({ ...req.body, model: upstreamModel }),
  parse,
};
