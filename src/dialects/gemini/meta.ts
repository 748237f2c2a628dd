// What the rest of the gateway knows of this dialect without loading it: the catalogue reads it
// through the leaf registry (../names.ts) to check a provider's `dialect` and a route's model.

import type { DialectMeta } from '../meta.js';

export const meta = {
  name: 'gemini',
  embeddings: true,
  // Gemini 2.5 (the first that thinks) and every later version.
  reasoningModels: /gemini-(?:2\.5|[3-9])/,
} as const satisfies DialectMeta;
