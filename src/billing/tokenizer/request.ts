// A count_tokens body, counted in the tokenizer thread from its bytes: decoding, parsing, reading
// it as its dialect and counting all happen there, so a request carrying megabytes of text costs
// a gateway's event loop no parse at all (a 15 MB body's decode and parse held it ~50 ms). Runs
// in the thread only (worker.ts); the gateway's side is pool.ts's countRequestBody.

import type { SurfaceCall } from '../../dialects/dialect.js';
import { DIALECTS, type DialectName } from '../../dialects/index.js';
import type { IRContent, IRRequest } from '../../dialects/ir.js';
import { GatewayError, type ErrorKind } from '../../errors.js';
import { CHUNK_CHARS, chunks, countBounded } from './bounded.js';

/**
 * What an image is assumed to cost before the upstream says: vendors scale images down to a
 * bounded size, so an image costs at most a few thousand tokens however many bytes it has
 * (Claude about 1,600; GPT-4.1's patches up to about 2,500).
 */
export const IMAGE_TOKENS = 2500;
/** Role markers and separators per message, as vendors add them. */
const PER_MESSAGE = 4;

/** One request to count, as the gateway sends it to the thread. */
export interface RequestToCount {
  /** The body's bytes, as the client sent them (already checked for depth and size). */
  body: Uint8Array;
  dialect: DialectName;
  call?: SurfaceCall;
  /** Fields filled in when absent: the dialect's parse wants them, a count request has none (Messages' max_tokens). */
  defaults?: Record<string, unknown>;
  /** When set, also the body as forwarded to a vendor's own count: without `model` (the route names its own) and these. */
  forwardWithout?: string[];
  /** Most characters of text counted; past it, too_large. */
  maxChars: number;
}

export interface RequestCount {
  model: string;
  tokens: number;
  /** The forwarded body's JSON, an object without `model`, when asked for. */
  forward?: Uint8Array;
}

/** A client's mistake, as the thread sends it back (a GatewayError does not cross threads). */
export interface CountRefusal {
  kind: ErrorKind;
  message: string;
  param?: string;
  code?: string;
}

const isRecord = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

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
  return { text: text.filter((s) => s), images };
}

const refusal = (err: GatewayError): CountRefusal => ({
  kind: err.kind,
  message: err.message,
  param: err.param,
  code: err.code,
});

/**
 * The input tokens of the request in `req.body`, counting with `count` (gpt-tokenizer's), and
 * pausing (`pause`, a turn of the thread's loop) every CHUNK_CHARS so that short counts queued
 * behind a long one wait one slice, not the whole. A client's mistake is a refusal, not a throw.
 */
export async function countRequest(
  req: RequestToCount,
  count: (s: string) => number,
  pause: () => Promise<void>,
): Promise<RequestCount | { refused: CountRefusal }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength).toString('utf8'));
  } catch {
    return {
      refused: { kind: 'invalid_request', message: 'The request body is not valid JSON.', code: 'invalid_json' },
    };
  }
  if (!isRecord(parsed))
    return { refused: { kind: 'invalid_request', message: 'The request body must be a JSON object.' } };
  let ir: IRRequest;
  try {
    ir = DIALECTS[req.dialect].parseRequest({ ...req.defaults, ...parsed }, req.call);
  } catch (err) {
    if (err instanceof GatewayError) return { refused: refusal(err) };
    throw err;
  }
  const { text, images } = requestText(ir);
  const chars = text.reduce((n, s) => n + s.length, 0);
  if (chars > req.maxChars) {
    return {
      refused: {
        kind: 'too_large',
        message: `The request has ${chars} characters of text; tokens are counted locally for at most ${req.maxChars}.`,
      },
    };
  }
  let forward: Uint8Array | undefined;
  if (req.forwardWithout) {
    const rest: Record<string, unknown> = { ...parsed };
    delete rest.model;
    for (const f of req.forwardWithout) delete rest[f];
    // A buffer of its own (never a slice of a pool), so that it can be handed over, not copied.
    forward = new TextEncoder().encode(JSON.stringify(rest));
  }
  let counted = 0;
  let sincePause = 0;
  for (const t of text) {
    for (const part of chunks(t)) {
      counted += countBounded(part, count);
      sincePause += part.length;
      if (sincePause >= CHUNK_CHARS) {
        sincePause = 0;
        await pause();
      }
    }
  }
  return { model: ir.model, tokens: images * IMAGE_TOKENS + ir.messages.length * PER_MESSAGE + counted, forward };
}
