// How a Gemini stream is framed for the client. With `alt=sse`: each chunk a full
// GenerateContentResponse as `data: <json>\r\n\r\n` (CRLF, no event names, no [DONE]). Without:
// one JSON array of those responses, written as they come: `[` before the first, `,` between,
// `]` after the last. Which element is the first is the one thing to remember, per stream.

import type { RenderContext } from '../dialect.js';

export const ARRAY_TYPE = 'application/json; charset=utf-8';

/** Streams of this context that have written their array's opening bracket. */
const opened = new WeakSet<RenderContext>();

export const isArrayStream = (ctx: RenderContext): boolean => ctx.call?.streamType === ARRAY_TYPE;

/** One chunk (its JSON text) in the stream's framing. */
export function frame(ctx: RenderContext, json: string): Buffer {
  if (!isArrayStream(ctx)) return Buffer.from(`data: ${json}\r\n\r\n`);
  const first = !opened.has(ctx);
  opened.add(ctx);
  return Buffer.from(first ? `[${json}` : `,\r\n${json}`);
}

/** The array's last element (if any) and its closing bracket. */
export function closeArray(ctx: RenderContext, json?: string): Buffer {
  const first = !opened.has(ctx);
  opened.add(ctx);
  if (json === undefined) return Buffer.from(first ? '[]' : ']');
  return Buffer.from(first ? `[${json}]` : `,\r\n${json}]`);
}

/** The last chunk of a stream: closes the array when there is one. */
export const frameLast = (ctx: RenderContext, json: string): Buffer =>
  isArrayStream(ctx) ? closeArray(ctx, json) : frame(ctx, json);
