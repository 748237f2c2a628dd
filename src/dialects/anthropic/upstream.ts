// A provider that speaks Anthropic Messages, as the gateway calls it: its URLs, its key and
// version headers, and what passes through when the client speaks Messages too.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import { eventWithModel, renamedAnswer } from '../../stream/json-bytes.js';
import { EnvelopeTap } from '../../stream/pass-through.js';
import { ZERO_USAGE } from '../ir.js';
import type { UpstreamSide, UsageSink } from '../dialect.js';
import { usageFromAnthropic } from './usage.js';

/**
 * Byte for byte, bar the model's name in message_start (the only event that carries it); usage
 * read from the two events that carry it. A text delta that is the last one with other text is
 * known by its bytes (stream/envelope.ts); the tap is its own envelope, one object per stream.
 */
export class MessagesPassThrough extends EnvelopeTap<UsageSink> {
  event(ev: SSEEvent): Buffer {
    const type = ev.event;
    const sink = this.sink;
    if (type === 'content_block_delta') {
      this.read(ev, sink);
      return ev.raw;
    }
    if (type === 'message_start' || type === 'message_delta') {
      try {
        const data = JSON.parse(ev.data) as { message?: { usage?: unknown }; usage?: unknown };
        const u = usageFromAnthropic(type === 'message_start' ? data.message?.usage : data.usage);
        // message_start's output_tokens is a placeholder; only message_delta's counts.
        if (u && type === 'message_start') delete u.output;
        sink.noteUsage(u);
      } catch {
        // forwarded as is
      }
      if (type === 'message_start') return eventWithModel(ev, this.name);
    } else if (type === 'error') sink.failed = true;
    else if (type === 'message_stop') return markFinal(ev.raw);
    return ev.raw;
  }
}

export const upstream: UpstreamSide = {
  endpoint: (baseUrl) => `${baseUrl}/v1/messages`,
  countTokensEndpoint: (baseUrl) => `${baseUrl}/v1/messages/count_tokens`,
  headers(key, forwarded, limits) {
    const headers: Record<string, string> = {};
    if (key) headers['x-api-key'] = key;
    // A client of another dialect sent no Anthropic headers: the default version, no betas.
    if (forwarded) Object.assign(headers, forwarded);
    else headers['anthropic-version'] = limits.ANTHROPIC_VERSIONS[0]!;
    return headers;
  },
  setOutputCap(body, cap) {
    body.max_tokens = cap;
  },
  passThroughWhole(text, json, ctx) {
    const u = usageFromAnthropic(json.usage);
    return { out: renamedAnswer(text, json, ctx.model), usage: u ? { ...ZERO_USAGE, ...u } : null };
  },
  passThroughTap: (sink, _ir, ctx) => new MessagesPassThrough(sink, ctx.model),
};
