// The registry: every wire dialect the gateway speaks, by the name the catalogue's providers
// give as `dialect`. A dialect with a surface is also served to clients (its route is
// registered from here); adding one is its folder, one line below and its name in names.ts
// (the type system refuses the one without the other).

import type { Dialect } from './dialect.js';
import type { DialectName } from './names.js';
import { anthropicMessages } from './anthropic-messages/index.js';
import { openaiChat } from './openai-chat/index.js';
import { openaiResponses } from './openai-responses/index.js';
import { gemini } from './gemini/index.js';

export const DIALECTS = {
  openai: openaiChat,
  anthropic: anthropicMessages,
  responses: openaiResponses,
  gemini,
} satisfies Record<DialectName, Dialect>;

export { DIALECT_NAMES, type DialectName } from './names.js';

/** A dialect's name in the registry (what crosses to another thread, where the object cannot). */
export const dialectName = (d: Dialect): DialectName => (Object.keys(DIALECTS) as DialectName[]).find((n) => DIALECTS[n] === d)!;

/** POST /v1/embeddings: not a dialect's surface (no IR, no stream), but its requests are billed under this name. */
export const EMBEDDINGS_SURFACE = 'embeddings';

/** The usage record's `surface` values: one per dialect served to clients, and embeddings. */
export const SURFACE_NAMES = [...Object.values(DIALECTS).flatMap((d: Dialect) => (d.surface ? [d.surface.name] : [])), EMBEDDINGS_SURFACE];
