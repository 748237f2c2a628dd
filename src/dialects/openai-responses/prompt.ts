// Where a Responses body carries images: `input_image` parts of an input message. Their
// `image_url` (a data URL or a link) is billed as an image, not as text.

import type { ImageSlot, PromptParts } from '../dialect.js';

export function promptParts(body: unknown): PromptParts {
  const images: ImageSlot[] = [];
  const input = (body as { input?: unknown } | null)?.input;
  if (Array.isArray(input)) {
    for (const item of input) {
      const content = (item as { content?: unknown } | null)?.content;
      if (!Array.isArray(content)) continue;
      for (const part of content as (Record<string, unknown> | null)[]) {
        if (part?.type === 'input_image') images.push({ holder: part, key: typeof part.image_url === 'string' ? 'image_url' : '' });
      }
    }
  }
  return { images, overheadTokens: 0 };
}
