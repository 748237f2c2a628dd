// Where a Messages body carries images (`image` blocks of a message's content, and inside its
// `tool_result` blocks), and what Anthropic adds to the input that no byte of the body shows:
// the system prompt of each typed client tool (computer use, bash, the text editor, memory).

import type { ImageSlot, PromptParts } from '../dialect.js';

/**
 * The most a typed client tool adds: computer use's system prompt and tool definition together
 * (about 735 + 499 tokens in Anthropic's tool-use pricing table), rounded up. Bash (245) and
 * the text editor (700) cost less.
 */
export const TYPED_TOOL_TOKENS = 1300;
const TYPED_TOOL = /^(?:bash|text_editor|computer|memory)_\d+$/;

function imageSlot(block: Record<string, unknown> | null, images: ImageSlot[]): void {
  if (block?.type !== 'image') return;
  const source = block.source as Record<string, unknown> | null;
  if (source === null || typeof source !== 'object') return;
  if (typeof source.data === 'string') images.push({ holder: source, key: 'data' });
  else if (typeof source.url === 'string') images.push({ holder: source, key: 'url' });
  else images.push({ holder: source, key: '' });
}

export function promptParts(body: unknown): PromptParts {
  const images: ImageSlot[] = [];
  const b = body as { messages?: unknown; tools?: unknown } | null;
  if (Array.isArray(b?.messages)) {
    for (const m of b.messages) {
      const content = (m as { content?: unknown } | null)?.content;
      if (!Array.isArray(content)) continue;
      for (const block of content as (Record<string, unknown> | null)[]) {
        imageSlot(block, images);
        if (block?.type === 'tool_result' && Array.isArray(block.content)) {
          for (const inner of block.content as (Record<string, unknown> | null)[]) imageSlot(inner, images);
        }
      }
    }
  }
  let overheadTokens = 0;
  if (Array.isArray(b?.tools)) {
    for (const t of b.tools) {
      const type = (t as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && TYPED_TOOL.test(type)) overheadTokens += TYPED_TOOL_TOKENS;
    }
  }
  return { images, overheadTokens };
}
