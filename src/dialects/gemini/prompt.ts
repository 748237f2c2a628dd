// Where a Gemini body carries images: `inlineData` parts with an image type (billed as images,
// not as their base64) and image `fileData` (a link: no payload in the body).

import type { ImageSlot, PromptParts } from '../dialect.js';
import { isRecord } from '../openai/shared.js';
import { field, record } from './fields.js';

const IMAGE = /^image\//i;

export function promptParts(body: unknown): PromptParts {
  const images: ImageSlot[] = [];
  const wrapped = record(field(body, 'generateContentRequest'));
  const contents = field(wrapped ?? body, 'contents');
  for (const c of Array.isArray(contents) ? contents : []) {
    const parts = isRecord(c) ? c.parts : undefined;
    for (const p of Array.isArray(parts) ? parts : []) {
      const inline = record(field(p, 'inlineData'));
      const file = record(field(p, 'fileData'));
      const mime = field(inline ?? file, 'mimeType');
      if (typeof mime !== 'string' || !IMAGE.test(mime)) continue;
      if (inline) images.push({ holder: inline, key: typeof inline.data === 'string' ? 'data' : '' });
      else if (file) images.push({ holder: file, key: '' });
    }
  }
  return { images, overheadTokens: 0 };
}
