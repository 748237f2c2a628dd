// Where an OpenAI chat body carries images: `image_url` parts of a message's content, and
// nowhere else. The hold counts their payloads (a data URL or a link) as images, not as text;
// an object of the same shape anywhere else is text like any other.

import type { ImageSlot, PromptParts } from '../dialect.js';

export function promptParts(body: unknown): PromptParts {
  const images: ImageSlot[] = [];
  const messages = (body as { messages?: unknown } | null)?.messages;
  if (Array.isArray(messages)) {
    for (const m of messages) {
      const content = (m as { content?: unknown } | null)?.content;
      if (!Array.isArray(content)) continue;
      for (const part of content) {
        const p = part as Record<string, unknown> | null;
        if (p?.type !== 'image_url') continue;
        const image = p.image_url;
        if (typeof image === 'string') images.push({ holder: p, key: 'image_url' });
        else if (
          image !== null &&
          typeof image === 'object' &&
          typeof (image as Record<string, unknown>).url === 'string'
        ) {
          images.push({ holder: image as Record<string, unknown>, key: 'url' });
        }
      }
    }
  }
  return { images, overheadTokens: 0 };
}
