// How many input tokens a request can be billed for, worked out from the body itself: an upper
// bound for the hold, taken before anything is forwarded, and an estimate of the vendor's count
// for the paths that bill without the upstream's usage (the client left, the upstream cut the
// stream or never said).
//
// The bound rests on one fact: vendors' tokenizers are byte-level BPE, so a token covers at least
// one byte of the text it encodes. Every token the model reads comes from some byte of the body
// (string values, keys, numbers), from an image, or from what the vendor adds around them (role
// markers, tool prompts), so the body's bytes, with images counted as images, bound it without
// running a tokenizer. docs/api.md ("Holds") states the bound and what it costs.

import type { Dialect, ImageSlot, PromptParts } from '../dialects/dialect.js';
import { countTokens } from './tokens.js';

/** The body as it arrived: its bytes and its objects and arrays (from the shape check). */
export interface BodySize {
  bytes: number;
  containers: number;
}

/** The size of a body the gateway made itself (a continuation's history spliced in). */
export function sizeOf(body: unknown): BodySize {
  let containers = 0;
  const count = (x: unknown): void => {
    if (x === null || typeof x !== 'object') return;
    containers++;
    for (const v of Array.isArray(x) ? x : Object.values(x)) count(v);
  };
  count(body);
  return { bytes: Buffer.byteLength(JSON.stringify(body)), containers };
}

/**
 * Vendors' markers around a message, a content block or a tool (role tokens, separators), and
 * what a translation adds per object (OpenAI's `"type":"function"` around a tool, say): at most
 * this many tokens per object or array of the body.
 */
export const PER_CONTAINER_TOKENS = 4;
/** Per request: the start of the prompt, the assistant's turn, the upstream model's name. */
export const BASE_TOKENS = 64;
/** The tool-use system prompt a vendor adds when tools are offered (Anthropic's: 313–346). */
export const TOOLS_TOKENS = 500;

type Body = Record<string, unknown>;

const hasTools = (body: Body) =>
  (Array.isArray(body.tools) && body.tools.length > 0) || (Array.isArray(body.functions) && body.functions.length > 0);

/** Characters of the images' payloads: in the body's bytes, but billed as images. */
function imageChars(images: ImageSlot[]): number {
  let n = 0;
  for (const { holder, key } of images) {
    const payload = key === '' ? undefined : holder[key];
    // UTF-16 units: never more than the payload's bytes in the body, so the bound only grows.
    if (typeof payload === 'string') n += payload.length;
  }
  return n;
}

/**
 * The most input tokens a body can be billed for: its bytes less its images' payloads, each
 * image at the model's most, the vendor's markers per object, the tool prompt, and what the
 * dialect says its vendor adds. A model whose context window is not stretched by long-context
 * pricing is never billed for more than that window: the vendor refuses a longer prompt.
 */
export function inputTokenBound(
  body: Body,
  size: BodySize,
  parts: PromptParts,
  model: { maxImageTokens: number; contextWindow: number; longContext: boolean },
): number {
  const tokens =
    size.bytes -
    imageChars(parts.images) +
    parts.images.length * model.maxImageTokens +
    size.containers * PER_CONTAINER_TOKENS +
    BASE_TOKENS +
    (hasTools(body) ? TOOLS_TOKENS : 0) +
    parts.overheadTokens;
  return model.longContext ? tokens : Math.min(tokens, model.contextWindow);
}

/** Anthropic cache breakpoints with a one-hour lifetime anywhere in the body: their writes cost more. */
export function asksOneHourCache(x: unknown): boolean {
  if (Array.isArray(x)) return x.some(asksOneHourCache);
  if (x === null || typeof x !== 'object') return false;
  const o = x as Body;
  if (o.type === 'ephemeral' && o.ttl === '1h') return true;
  for (const k in o) if (asksOneHourCache(o[k])) return true;
  return false;
}

/** A request body as it went upstream, in that upstream's dialect. */
export interface Forwarded {
  body: string;
  dialect: Dialect;
  maxImageTokens: number;
}

export const forwardedTokens = (f: Forwarded): Promise<number> =>
  countForwardedTokens(f.body, f.dialect, f.maxImageTokens);

/** Text is counted in pieces of about this size: large ones go to the tokenizer's thread. */
const BATCH_CHARS = 64 * 1024;

/**
 * The vendor's likely input count for a body that was forwarded and never reported on: every
 * string and key in it (whatever field it sits in, since the upstream read them all), each image
 * at the model's most, and the dialect's fixed overheads. Strings are joined by newlines for the
 * tokenizer, which splits on them, and the newlines are taken off again.
 */
export async function countForwardedTokens(json: string, dialect: Dialect, maxImageTokens: number): Promise<number> {
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    return countTokens(json);
  }
  const parts = dialect.promptParts(body);
  const skip = new Map<object, string>();
  for (const { holder, key } of parts.images) skip.set(holder, key);
  let total = parts.images.length * maxImageTokens + parts.overheadTokens;
  let batch: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    total += Math.max(0, (await countTokens(batch.join('\n'))) - (batch.length - 1));
    batch = [];
    chars = 0;
  };
  const add = async (s: string) => {
    if (s === '') return;
    batch.push(s);
    chars += s.length;
    if (chars >= BATCH_CHARS) await flush();
  };
  const visit = async (x: unknown): Promise<void> => {
    if (typeof x === 'string') await add(x);
    else if (Array.isArray(x)) for (const item of x) await visit(item);
    else if (x !== null && typeof x === 'object') {
      const skipped = skip.get(x);
      for (const [k, v] of Object.entries(x)) {
        await add(k);
        if (k !== skipped) await visit(v);
      }
    }
  };
  await visit(body);
  await flush();
  return total;
}
