// What the rest of the gateway knows of this dialect without loading it: the catalogue reads it
// through the leaf registry (../names.ts) to check a provider's `dialect` and a route's model.

import type { DialectMeta } from '../meta.js';
import { meta as openai } from '../openai/meta.js';

export const meta = {
  name: 'responses',
  // No adapter: the vendor's /embeddings is reached through a provider of the `openai` dialect.
  embeddings: false,
  // The same vendor's models as the chat completions dialect.
  reasoningModels: openai.reasoningModels,
} as const satisfies DialectMeta;
