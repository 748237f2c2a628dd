// Where a Responses body carries images: `input_image` parts of an input message. Their
// `image_url` (a data URL or a link) is billed as an image, not as text. And what the gateway
// adds to it for compaction (./compaction.ts), which the body's bytes do not bound.

import type { ImageSlot, PromptParts } from '../dialect.js';
import { COMPACTION_PROMPT, compactionSummary, isCompactionTrigger, SUMMARY_HEADING } from './compaction.js';

/** Tokens the gateway adds for a compaction's instruction, and around each summary it unwraps (at most one per byte, and the markers). */
const COMPACTION_TOKENS = Buffer.byteLength(COMPACTION_PROMPT) + 16;
const SUMMARY_TOKENS = Buffer.byteLength(SUMMARY_HEADING) + 16;

export function promptParts(body: unknown): PromptParts {
  const images: ImageSlot[] = [];
  let overheadTokens = 0;
  const input = (body as { input?: unknown } | null)?.input;
  if (Array.isArray(input)) {
    for (const item of input) {
      // What the body does not hold but the model reads: a compaction's instruction, a summary's
      // heading (the summary itself is shorter than its base64 in the body).
      if (isCompactionTrigger(item)) overheadTokens += COMPACTION_TOKENS;
      else if (compactionSummary(item) !== undefined) overheadTokens += SUMMARY_TOKENS;
      const content = (item as { content?: unknown } | null)?.content;
      if (!Array.isArray(content)) continue;
      for (const part of content as (Record<string, unknown> | null)[]) {
        if (part?.type === 'input_image')
          images.push({ holder: part, key: typeof part.image_url === 'string' ? 'image_url' : '' });
      }
    }
  }
  return { images, overheadTokens };
}
