// Token counts the gateway works out itself with the o200k tokenizer (bounded, off the event
// loop): the text an answer produced when the upstream never reported usage. count_tokens'
// counts of whole requests are made in the thread from the body's bytes
// (tokenizer/request.ts); the hold needs no tokenizer (prompt-size.ts).

// Counted off the event loop, in linear time: gpt-tokenizer alone is quadratic in a long word
// and would stall the process for seconds to minutes.
import { countTokens } from './tokenizer/pool.js';

export { countTokens };

export async function countTextTokens(pieces: string[]): Promise<number> {
  const text = pieces.join('');
  return text ? countTokens(text) : 0;
}
