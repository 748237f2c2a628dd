// The registry: one line per wire dialect, its folder's meta.ts, which is what the catalogue and
// the admin API know of it without loading it (the dialects pull in valibot schemas, RxJS and
// the stream code). The full dialects (index.ts) are loaded from the folders this list names, and
// their types derived from it; test/dialects/registry.test.ts checks what each folder provides.

import { meta as openai } from './openai/meta.js';
import { meta as anthropic } from './anthropic/meta.js';
import { meta as responses } from './responses/meta.js';
import { meta as gemini } from './gemini/meta.js';
import type { DialectMeta } from './meta.js';

export type { DialectMeta };

/** In the order error messages and the admin API list them. */
export const DIALECT_METAS = [openai, anthropic, responses, gemini] as const;

type Meta = (typeof DIALECT_METAS)[number];

export type DialectName = Meta['name'];

/** The names of the wire dialects, as the catalogue's providers give them. */
export const DIALECT_NAMES: readonly DialectName[] = DIALECT_METAS.map((m) => m.name);

type EmbeddingMeta = Extract<Meta, { embeddings: true }>;

export type EmbeddingDialectName = EmbeddingMeta['name'];

/**
 * The dialects whose providers serve embeddings (POST /v1/embeddings): an embedding model's
 * routes must name one.
 */
export const EMBEDDING_DIALECT_NAMES: readonly EmbeddingDialectName[] = DIALECT_METAS.filter(
  (m): m is EmbeddingMeta => m.embeddings,
).map((m) => m.name);

/** Each vendor's reasoning-model pattern once (dialects of one vendor share theirs). */
export const REASONING_MODEL_PATTERNS: readonly RegExp[] = [
  ...new Set(DIALECT_METAS.map((m: DialectMeta) => m.reasoningModels).filter((p) => p !== undefined)),
];
