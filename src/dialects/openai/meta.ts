// What the rest of the gateway knows of this dialect without loading it: the catalogue reads it
// through the leaf registry (../names.ts) to check a provider's `dialect` and a route's model.

import type { DialectMeta } from '../meta.js';

export const meta = {
  name: 'openai',
  embeddings: true,
  // o1, o3, o4-mini…, gpt-5*.
  reasoningModels: /o\d|gpt-5/,
} as const satisfies DialectMeta;
