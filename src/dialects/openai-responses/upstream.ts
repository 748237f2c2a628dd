// A provider that speaks the Responses API, as the gateway calls it (newer OpenAI models are
// served only that way): its URL and key, the output cap as `max_output_tokens`, and what passes
// through when the client speaks Responses too. Only the terminal event carries usage; it also
// carries the whole answer, which is kept for `previous_response_id`.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import type { UpstreamSide, UsageSink } from '../dialect.js';
import { isRecord } from '../openai-chat/shared.js';
import { usageFromResponses } from './usage.js';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const TEXT_DELTA = new Set(['response.output_text.delta', 'response.refusal.delta', 'response.reasoning_summary_text.delta', 'response.function_call_arguments.delta', 'response.custom_tool_call_input.delta']);

/** The event's type: its `event:` line, which the API always sends, else the data's `type`. */
function typeOf(ev: SSEEvent, data: Record<string, unknown> | undefined): string {
  return ev.event ?? (typeof data?.type === 'string' ? data.type : '');
}

export function responsesPassThrough(sink: UsageSink): (ev: SSEEvent) => Buffer {
  return (ev) => {
    let data: Record<string, unknown> | undefined;
    const type = ev.event;
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
      else if (response) sink.noteAnswer?.(response);
      return markFinal(ev.raw);
    } else if (t === 'error') sink.failed = true;
    return ev.raw;
  };
}

export const upstream: UpstreamSide = {
  endpoint: (baseUrl) => `${baseUrl}/responses`,
  headers: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  setOutputCap(body, cap) {
    body.max_output_tokens = cap;
  },
  passThroughWhole(text, json) {
    return { out: text, usage: usageFromResponses(json.usage) };
  },
  passThroughTap: (sink) => responsesPassThrough(sink),
};
