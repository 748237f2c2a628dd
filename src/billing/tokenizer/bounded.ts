// o200k counting in time linear in the text. gpt-tokenizer's byte-pair merge is quadratic or
// worse in the length of one pre-token (10k chars of "x": 0.7 s; 100k: 66 s), and a request
// body is one pre-token if it is one long word. Vendors' own tokenizers cap the pre-token
// length for the same reason; here any pre-token longer than MAX_PIECE is cut into pieces of
// at most MAX_PIECE code units and each piece counted on its own. Ordinary text has no such
// runs, so it is counted in one call, exactly as gpt-tokenizer counts it; a cut run counts a
// little more than it would whole (the merges across a cut are lost), never less than a
// fraction of it: an upper-bound-ish count where only an upper bound is cheap.
//
// No gpt-tokenizer import here: the tables stay in the tokenizer worker (worker.ts), which
// passes its count function in.

/** o200k's pre-token pattern (tiktoken's, as gpt-tokenizer 4 has it in encodingParams/constants). */
const CONTRACTION = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
export const O200K_PRETOKEN = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  'gu',
);

/**
 * Longest pre-token merged whole. A 256-unit piece costs about 0.05 ms to merge; no real word,
 * number group or whitespace run is that long, so ordinary text is never cut.
 */
export const MAX_PIECE = 256;

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * Tokens of `text`, counting with `count` (gpt-tokenizer's countTokens) only strings whose
 * pre-tokens are at most MAX_PIECE long.
 */
export function countBounded(text: string, count: (s: string) => number): number {
  let total = 0;
  // Start of the text not yet counted: runs of ordinary pre-tokens are counted together,
  // so that text without long runs is a single call whose result is gpt-tokenizer's own.
  let from = 0;
  for (const m of text.matchAll(O200K_PRETOKEN)) {
    const run = m[0];
    if (run.length <= MAX_PIECE) continue;
    const at = m.index;
    if (at > from) total += count(text.slice(from, at));
    for (let i = 0; i < run.length;) {
      let end = Math.min(i + MAX_PIECE, run.length);
      // Never between the halves of a surrogate pair: each half alone would be a lone
      // surrogate, which encodes as U+FFFD, another character with other tokens.
      if (end < run.length && isHighSurrogate(run.charCodeAt(end - 1))) end--;
      total += count(run.slice(i, end));
      i = end;
    }
    from = at + run.length;
  }
  if (from < text.length) total += count(from === 0 ? text : text.slice(from));
  return total;
}

/** Longest text counted as one job; longer ones are cut into chunks of about this size. */
export const CHUNK_CHARS = 256 * 1024;

/** `text` in chunks of about CHUNK_CHARS, each cut after a whitespace when one is near. */
export function chunks(text: string): string[] {
  if (text.length <= CHUNK_CHARS) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length;) {
    let end = Math.min(i + CHUNK_CHARS, text.length);
    if (end < text.length) {
      // A cut inside a word changes its tokens; after a space it changes at most one or two.
      const space = text.lastIndexOf(' ', end - 1);
      if (space > end - 1024 && space > i) end = space + 1;
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}
