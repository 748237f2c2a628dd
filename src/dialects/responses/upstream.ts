// A provider that speaks the Responses API, as the gateway calls it (newer OpenAI models are
// served only that way): its URL and key, the output cap as `max_output_tokens`, and what passes
// through when the client speaks Responses too. Only the terminal event carries usage; it also
// carries the whole answer, which is kept for `previous_response_id`.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import { eventWithModel, modelName, renamedAnswer } from '../../stream/json-bytes.js';
import type { UpstreamSide, UsageSink } from '../dialect.js';
import { isRecord } from '../openai/shared.js';
import { compactionSummary, unwrapCompaction } from './compaction.js';
import { usageFromResponses } from './usage.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const TEXT_DELTA = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
  'response.custom_tool_call_input.delta',
]);

/** The event's type: its `event:` line, which the API always sends, else the data's `type`. */
function typeOf(ev: SSEEvent, data: Record<string, unknown> | undefined): string {
  return ev.event ?? (typeof data?.type === 'string' ? data.type : '');
}

/**
 * A text delta's text, read without parsing the event: its one `"delta":"…"` (in valid JSON an
 * unescaped quote is structural, so that is the key and its string); undefined when the event
 * must be parsed instead.
 */
function deltaOf(data: string): string | undefined {
  const at = data.indexOf('"delta":"');
  if (at === -1 || data.indexOf('"delta":', at + 1) !== -1) return undefined;
  const before = data.charCodeAt(at - 1);
  if (before !== 0x2c && before !== 0x7b) return undefined;
  const start = at + 9;
  let end = start;
  for (;;) {
    end = data.indexOf('"', end);
    if (end === -1) return undefined;
    let slashes = 0;
    while (data.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) break;
    end++;
  }
  const raw = data.slice(start, end);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/** Events that carry the response object, and with it the model's name: `response.<one word>`. */
const carriesResponse = (type: string) => type.startsWith('response.') && type.indexOf('.', 9) === -1;

export function responsesPassThrough(sink: UsageSink, model?: string): (ev: SSEEvent) => Buffer {
  const name = model === undefined ? undefined : modelName(model);
  return (ev) => {
    let data: Record<string, unknown> | undefined;
    const type = ev.event;
    if (type !== undefined && TEXT_DELTA.has(type)) {
      // The common delta, read without a parse: most of a stream's events, none of which carries usage.
      const text = deltaOf(ev.data);
      if (text !== undefined) {
        sink.noteText(text);
        return ev.raw;
      }
    }
    // Events without an `event:` line are read to learn their type; with one, only those that matter.
    if (type === undefined || TERMINAL.has(type) || TEXT_DELTA.has(type) || type === 'error') {
      try {
        const parsed: unknown = JSON.parse(ev.data);
        if (isRecord(parsed)) data = parsed;
      } catch {
        return ev.raw;
      }
    }
    const t = typeOf(ev, data);
    if (TEXT_DELTA.has(t)) {
      if (typeof data?.delta === 'string') sink.noteText(data.delta);
    } else if (TERMINAL.has(t)) {
      const response = isRecord(data?.response) ? data.response : undefined;
      sink.noteUsage(usageFromResponses(response?.usage));
      if (t === 'response.failed') sink.failed = true;
      else if (response) {
        // Kept for GET /v1/responses/{id}: it names the model as the client's stream did.
        if (model !== undefined && typeof response.model === 'string') response.model = model;
        sink.noteAnswer?.(response);
      }
      return markFinal(name ? eventWithModel(ev, name) : ev.raw);
    } else if (t === 'error') sink.failed = true;
    if (name && carriesResponse(t)) return eventWithModel(ev, name);
    return ev.raw;
  };
}

export const upstream: UpstreamSide = {
  endpoint: (baseUrl) => `${baseUrl}/responses`,
  headers: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  setOutputCap(body, cap) {
    body.max_output_tokens = cap;
  },
  prepareForward(body) {
    // The gateway's own compaction items are its summaries: the vendor reads them as messages.
    if (Array.isArray(body.input) && body.input.some((item) => compactionSummary(item) !== undefined))
      body.input = body.input.map(unwrapCompaction);
  },
  passThroughWhole(text, json, ctx) {
    return { out: renamedAnswer(text, json, ctx.model), usage: usageFromResponses(json.usage) };
  },
  passThroughTap: (sink, _ir, ctx) => ({ event: responsesPassThrough(sink, ctx.model) }),
};
