// A provider that speaks Anthropic Messages, as the gateway calls it: its URLs, its key and
// version headers, and what passes through when the client speaks Messages too.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import { ZERO_USAGE } from '../ir.js';
import type { UpstreamSide, UsageSink } from '../dialect.js';
import { usageFromAnthropic } from './usage.js';

/** Byte for byte; usage read from the two events that carry it. */
export function messagesPassThrough(sink: UsageSink): (ev: SSEEvent) => Buffer {
  return (ev) => {
    if (ev.event === 'message_start' || ev.event === 'message_delta') {
      try {
        const data = JSON.parse(ev.data) as { message?: { usage?: unknown }; usage?: unknown };
        const u = usageFromAnthropic(ev.event === 'message_start' ? data.message?.usage : data.usage);
        // message_start's output_tokens is a placeholder; only message_delta's counts.
        if (u && ev.event === 'message_start') delete u.output;
        sink.noteUsage(u);
      } catch {
        // forwarded as is
      }
    } else if (ev.event === 'content_block_delta') sink.noteRaw(ev.data);
    else if (ev.event === 'error') sink.failed = true;
    else if (ev.event === 'message_stop') return markFinal(ev.raw);
    return ev.raw;
  };
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
  passThroughWhole(text, json) {
    const u = usageFromAnthropic(json.usage);
    return { out: text, usage: u ? { ...ZERO_USAGE, ...u } : null };
  },
  passThroughTap: (sink) => messagesPassThrough(sink),
};
