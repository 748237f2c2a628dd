// Embeddings upstreams: how a provider of each dialect that has an embeddings endpoint is
// called for POST /v1/embeddings (src/inference/embeddings.ts). Embeddings have no IR: a request
// is a list of inputs and a few settings, an answer a list of vectors and, when the vendor says,
// how many tokens it read. One adapter per dialect, in that dialect's folder; the registry below
// is checked by the type system against EMBEDDING_DIALECT_NAMES, which the catalogue reads to
// refuse an embedding model routed to a provider without embeddings.

import type { EmbeddingDialectName } from './names.js';
import { openaiEmbeddings } from './openai-chat/embeddings.js';
import { geminiEmbeddings } from './gemini/embeddings.js';

/** One input: text, or token ids of the upstream's tokenizer. */
export type EmbeddingInput = string | number[];

/** A client's request, validated. */
export interface EmbeddingsRequest {
  /** The client's body as it came (a same-dialect upstream is sent it, bar `model`). */
  body: Record<string, unknown>;
  inputs: EmbeddingInput[];
  /** Some input is token ids, which only an upstream of the same tokenizer can read. */
  tokenInputs: boolean;
  dimensions?: number;
  encodingFormat: 'float' | 'base64';
}

/** An upstream's answer: one vector per input, in order, as floats or as base64 of little-endian float32. */
export interface UpstreamEmbeddings {
  vectors: (number[] | string)[];
  /** The input tokens the upstream counted; null when it does not say. */
  promptTokens: number | null;
}

export interface EmbeddingsUpstream {
  /** Most inputs one upstream request may carry. */
  maxInputs: number;
  /** Whether token-id inputs can be sent (an upstream that takes text only cannot). */
  takesTokens: boolean;
  endpoint(baseUrl: string, upstreamModel: string): string;
  headers(key: string | undefined): Record<string, string>;
  body(req: EmbeddingsRequest, upstreamModel: string): Record<string, unknown>;
  /** The answer's vectors and usage; undefined when it is not an embeddings answer of this dialect. */
  parse(json: unknown): UpstreamEmbeddings | undefined;
}

export const EMBEDDINGS = {
  openai: openaiEmbeddings,
  gemini: geminiEmbeddings,
} satisfies Record<EmbeddingDialectName, EmbeddingsUpstream>;

export function embeddingsUpstream(dialect: string): EmbeddingsUpstream | undefined {
  return Object.hasOwn(EMBEDDINGS, dialect) ? EMBEDDINGS[dialect as EmbeddingDialectName] : undefined;
}
