// Embeddings upstreams: how a provider of each dialect that has an embeddings endpoint is
// called for POST /v1/embeddings (src/inference/embeddings.ts). Embeddings have no IR: a request
// is a list of inputs and a few settings, an answer a list of vectors and, when the vendor says,
// how many tokens it read. A dialect's adapter is in its folder (embeddings.ts) and declared by
// its index.ts; its meta.ts says it has one (EMBEDDING_DIALECT_NAMES, which the catalogue reads
// to refuse an embedding model routed to a provider without embeddings), and the type system
// holds the two together. The adapters' shapes are in dialect.ts, with the rest of what a
// dialect provides.

import type { EmbeddingsUpstream } from './dialect.js';
import { DIALECTS } from './index.js';
import { EMBEDDING_DIALECT_NAMES, type EmbeddingDialectName } from './names.js';

export const EMBEDDINGS = Object.fromEntries(
  EMBEDDING_DIALECT_NAMES.map((name) => [name, DIALECTS[name].embeddings]),
) as Record<EmbeddingDialectName, EmbeddingsUpstream>;

export function embeddingsUpstream(dialect: string): EmbeddingsUpstream | undefined {
  return Object.hasOwn(EMBEDDINGS, dialect) ? EMBEDDINGS[dialect as EmbeddingDialectName] : undefined;
}

export type { EmbeddingInput, EmbeddingsRequest, EmbeddingsUpstream, UpstreamEmbeddings } from './dialect.js';
