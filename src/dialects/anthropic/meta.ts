// What the rest of the gateway knows of this dialect without loading it: the catalogue reads it
// through the leaf registry (../names.ts) to check a provider's `dialect` and a route's model.

import type { DialectMeta } from '../meta.js';

export const meta = {
  name: 'anthropic',
  embeddings: false,
  // Claude 3.7 (the first with extended thinking) and every Claude 4 and later, in both spellings
  // (claude-sonnet-4-…, claude-4-sonnet…).
  reasoningModels: /claude-(?:3-7-|(?:opus|sonnet|haiku)-4|[4-9])/,
} as const satisfies DialectMeta;
