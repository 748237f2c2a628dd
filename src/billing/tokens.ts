// Token counts the gateway works out itself with the o200k tokenizer (bounded, off the event
// loop): what count_tokens answers for models without an Anthropic upstream, and the text an
// answer produced when the upstream never reported usage. The hold needs no tokenizer
// (prompt-size.ts).

import type { IRContent, IRRequest } from '../dialects/ir.js';
// Counted off the event loop, in linear time: gpt-tokenizer alone is quadratic in a long word
// and would stall the process for seconds to minutes.
import { countTokens, countTokensOrRefuse } from './tokenizer/pool.js';

/**
 * What an image is assumed to cost before the upstream says: vendors scale images down to a
 * bounded size, so an image costs at most a few thousand tokens however many bytes it has
 * (Claude about 1,600; GPT-4.1's patches up to about 2,500).
 */
export const IMAGE_TOKENS = 2500;
/** Role markers and separators per message, as vendors add them. */
const PER_MESSAGE = 4;

function contentText(blocks: IRContent[], out: string[]): number {
  let images = 0;
  for (const b of blocks) {
    if (b.type === 'text') out.push(b.text);
    else if (b.type === 'thinking') out.push(b.thinking);
    else if (b.type === 'tool_use') out.push(b.name, JSON.stringify(b.input ?? null));
    else if (b.type === 'tool_result') {
      if (typeof b.content === 'string') out.push(b.content);
      else images += contentText(b.content, out);
    } else if (b.type === 'image') images++;
  }
  return images;
}

/** Every piece of text the model will read, and how many images. */
export function requestText(ir: IRRequest): { text: string[]; images: number } {
  const text: string[] = [...ir.system];
  let images = 0;
  for (const m of ir.messages) images += contentText(m.content, text);
  for (const t of ir.tools ?? []) text.push(t.name, t.description ?? '', JSON.stringify(t.parameters));
  return { text, images };
}

export { countTokens };

/**
 * Input tokens of a request as the tokenizer counts them. `refusable` (count_tokens): past the
 * tokenizer's size or backlog limits, TokenizerRefused instead of a wait or an upper bound.
 */
export async function countRequestTokens(ir: IRRequest, { refusable = false } = {}): Promise<number> {
  const { text, images } = requestText(ir);
  const pieces = text.filter((t) => t);
  const counted = refusable ? await countTokensOrRefuse(pieces) : (await Promise.all(pieces.map((t) => countTokens(t)))).reduce((a, b) => a + b, 0);
  return images * IMAGE_TOKENS + ir.messages.length * PER_MESSAGE + counted;
}

export async function countTextTokens(pieces: string[]): Promise<number> {
  const text = pieces.join('');
  return text ? countTokens(text) : 0;
}
