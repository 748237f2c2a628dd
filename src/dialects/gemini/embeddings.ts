// A Gemini API provider's batchEmbedContents, for POST /v1/embeddings (PROTOCOLS.md, Gemini,
// "Embeddings"): each input is one request of the batch, naming the model again, with
// `outputDimensionality` for OpenAI's `dimensions`; the answer is `{embeddings:[{values}]}` with
// no usage at all, so the gateway counts the input itself (src/inference/embeddings.ts).
//
// The catalogue's base_url is the API's root or its versioned URL, as for chat (upstream.ts).

import type { EmbeddingsUpstream, UpstreamEmbeddings } from '../dialect.js';
import { versionedBase } from './upstream.js';

const isRecord = (x: unknown): x is Record<string, any> => x !== null && typeof x === 'object' && !Array.isArray(x);

/** `gemini-embedding-001` or `models/gemini-embedding-001`: the id without its collection. */
const modelName = (m: string) => m.replace(/^models\//, '');

function parse(json: unknown): UpstreamEmbeddings | undefined {
  if (!isRecord(json) || !Array.isArray(json.embeddings)) return undefined;
  const vectors: number[][] = [];
  for (const e of json.embeddings) {
    if (!isRecord(e) || !Array.isArray(e.values) || !e.values.every((n: unknown) => typeof n === 'number'))
      return undefined;
    vectors.push(e.values);
  }
  return { vectors, promptTokens: null };
}

export const geminiEmbeddings: EmbeddingsUpstream = {
  // "BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch".
  maxInputs: 100,
  // Gemini reads text only; token ids of OpenAI's tokenizers mean nothing to it.
  takesTokens: false,
  endpoint: (baseUrl, upstreamModel) =>
    `${versionedBase(baseUrl)}/models/${encodeURIComponent(modelName(upstreamModel))}:batchEmbedContents`,
  headers: (key): Record<string, string> => (key ? { 'x-goog-api-key': key } : {}),
  body(req, upstreamModel) {
    const model = `models/${modelName(upstreamModel)}`;
    return {
      requests: req.inputs.map((text) => ({
        model,
        content: { parts: [{ text: text as string }] },
        ...(req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {}),
      })),
    };
  },
  parse,
};
