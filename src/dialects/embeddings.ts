// Embeddings upstreams: how a provider of each dialect that has an embeddings endpoint is
// called for POST /v1/embeddings (src/inference/embeddings.ts). Embeddings have no IR: a request
// is a list of inputs and a few settings, an answer a list of vectors and, when the vendor says,
// how many tokens it read. One adapter per dialect, in that dialect's folder; the registry below
// is checked by the type system against EMBEDDING_DIALECT_NAMES, which the catalogue reads to
// refuse an embedding model routed to a provider without embeddings. The adapters' shapes are in
// dialect.ts, with the rest of what a dialect provides.

import type { EmbeddingsUpstream } from './dialect.js';
import type { EmbeddingDialectName } from './names.js';
import { openaiEmbeddings } from './openai-chat/embeddings.js';
import { geminiEmbeddings } from './gemini/embeddings.js';

export const EMBEDDINGS = {
  openai: openaiEmbeddings,
  gemini: geminiEmbeddings,
} satisfies Record<EmbeddingDialectName, EmbeddingsUpstream>;

export function embeddingsUpstream(dialect: string): EmbeddingsUpstream | undefined {
  return Object.hasOwn(EMBEDDINGS, dialect) ? EMBEDDINGS[dialect as EmbeddingDialectName] : undefined;
}

export type { EmbeddingInput, EmbeddingsRequest, EmbeddingsUpstream, UpstreamEmbeddings } from './dialect.js';
