// A provider that speaks OpenAI chat, as the gateway calls it: its URL and auth, the field that
// carries the output cap, and what passes through when the client speaks OpenAI chat too.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import { eventWithModel, textWithModel } from '../../stream/json-bytes.js';
import { EnvelopeTap } from '../../stream/pass-through.js';
import type { IRRequest, IRUsage } from '../ir.js';
import type { MaxTokensField, RenderContext, UpstreamProvider, UpstreamSide, UsageSink } from '../dialect.js';
import { usageFromOpenAI, usageToOpenAI } from './usage.js';

/**
 * OpenAI's reasoning models (o-series, gpt-5) reject `max_tokens` and want
 * `max_completion_tokens`; nearly every other OpenAI-compatible vendor (DeepSeek, Mistral,
 * Groq, Together, vLLM, older Azure API versions) knows only `max_tokens`, or ignores the newer
 * name, which would silently lift the cap billing reserved for.
 */
const NEEDS_MAX_COMPLETION_TOKENS = /^(?:openai\/)?(?:o\d|gpt-5)/i;

/**
 * The one rule for the field that carries the output cap, on translated and forwarded requests
 * alike: the operator's `max_tokens_field` when set; otherwise `max_completion_tokens` on
 * OpenAI's own API (which takes it on every model) and, elsewhere, for model names known to
 * require it (Azure and other hosts serving o-series or gpt-5); `max_tokens` for the rest.
 * Without a provider (a body built on its own) the model name decides.
 */
export function capField(provider: UpstreamProvider | undefined, upstreamModel: string): MaxTokensField {
  if (provider?.maxTokensField) return provider.maxTokensField;
  if (provider?.host === 'api.openai.com' || NEEDS_MAX_COMPLETION_TOKENS.test(upstreamModel))
    return 'max_completion_tokens';
  return 'max_tokens';
}

/** Exactly `cap`, in the field(s) the provider honours; the other one removed. */
export function setOutputCap(
  body: Record<string, unknown>,
  cap: number,
  provider: UpstreamProvider | undefined,
  upstreamModel: string,
): void {
  const field = capField(provider, upstreamModel);
  if (field !== 'max_completion_tokens') body.max_tokens = cap;
  else delete body.max_tokens;
  if (field !== 'max_tokens') body.max_completion_tokens = cap;
  else delete body.max_completion_tokens;
}

const USAGE_KEY = /"usage"\s*:\s*\{/g;

/**
 * Adds `cached_tokens` (and `prompt_tokens_details`) to the usage object of an upstream answer
 * by inserting text, so the common answer goes out without a parse-and-stringify round trip.
 * Undefined when the shape asks for a real rewrite. In valid JSON an unescaped `"usage":{`
 * can only be a key, and the answer's own usage is its last one.
 */
export function spliceCachedTokens(text: string, usage: Record<string, any>, cached: number): string | undefined {
  const details = usage.prompt_tokens_details;
  const hasTop = 'cached_tokens' in usage;
  if (details && typeof details === 'object') {
    if (details.cached_tokens === undefined) return undefined;
    if (hasTop) return text;
  }
  let at = -1;
  for (let m = USAGE_KEY.exec(text); m; m = USAGE_KEY.exec(text)) at = m.index + m[0].length;
  USAGE_KEY.lastIndex = 0;
  if (at === -1) return undefined;
  const parts: string[] = [];
  if (!hasTop) parts.push(`"cached_tokens":${cached}`);
  if (!details) parts.push(`"prompt_tokens_details":{"cached_tokens":${cached}}`);
  if (parts.length === 0) return text;
  const empty = Object.keys(usage).length === 0;
  return text.slice(0, at) + parts.join(',') + (empty ? '' : ',') + text.slice(at);
}

function passThroughWhole(
  text: string,
  json: Record<string, any>,
  ctx: RenderContext,
): { out: string; usage: IRUsage | null } {
  const usage = usageFromOpenAI(json.usage);
  // Some OpenAI-compatible vendors use bare UUIDs; clients expect the chatcmpl- form.
  const idOk = typeof json.id === 'string' && json.id.startsWith('chatcmpl-');
  // The answer names the model the client asked for; the upstream's own name stays ours.
  const renamed =
    typeof json.model !== 'string' || json.model === ctx.model ? text : textWithModel(text, json.model, ctx.model);
  const spliced =
    idOk && usage && renamed !== undefined ? spliceCachedTokens(renamed, json.usage, usage.cacheRead) : undefined;
  if (spliced !== undefined) return { out: spliced, usage };
  // The chat surface always carries cached_tokens at top level too (API.md §1).
  if (usage)
    json.usage = {
      ...json.usage,
      ...usageToOpenAI(usage),
      prompt_tokens_details: { ...json.usage?.prompt_tokens_details, cached_tokens: usage.cacheRead },
    };
  if (!idOk) json.id = ctx.id;
  json.model = ctx.model;
  return { out: JSON.stringify(json), usage };
}

const USAGE_OBJECT = /"usage"\s*:\s*\{/;
/** An `"error":` key; inside JSON strings quotes are escaped, so text cannot match this. */
const ERROR_KEY = /"error"\s*:/;

/**
 * Events pass through as the bytes that came, bar the model's name (every chunk carries it).
 * Only the usage chunk is parsed; it is dropped (null) unless the client asked for it (the
 * gateway always asks upstream). A chunk that is the previous one with other text is known by
 * its bytes (stream/envelope.ts), without decoding it or the scans below. The tap is its own
 * envelope: one object per open stream, touched once per token.
 */
export class ChatPassThrough extends EnvelopeTap<UsageSink> {
  constructor(
    sink: UsageSink,
    private readonly includeUsage: boolean,
    model: string,
  ) {
    super(sink, model);
  }

  event(ev: SSEEvent): Buffer | null {
    const data = ev.data;
    if (data === '[DONE]') return markFinal(ev.raw);
    const sink = this.sink;
    if (USAGE_OBJECT.test(data)) {
      try {
        const chunk = JSON.parse(data) as { usage?: unknown; choices?: unknown[] };
        sink.noteUsage(usageFromOpenAI(chunk.usage));
        if (!this.includeUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return null;
      } catch {
        // Not JSON: forwarded as is; the client sees what the upstream sent.
      }
    } else if (ERROR_KEY.test(data) && isErrorChunk(data)) sink.failed = true;
    else this.read(ev, sink, this.name);
    return eventWithModel(ev, this.name);
  }
}

function isErrorChunk(data: string): boolean {
  try {
    const chunk = JSON.parse(data) as { error?: unknown };
    return chunk.error !== null && typeof chunk.error === 'object';
  } catch {
    return false;
  }
}

export const upstream: UpstreamSide = {
  endpoint: (baseUrl) => `${baseUrl}/chat/completions`,
  headers: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  setOutputCap,
  prepareForward(body: Record<string, unknown>, ir: IRRequest) {
    // Billing needs the counts whatever the client asked for; the tap drops them again.
    if (ir.stream) body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  },
  passThroughWhole,
  passThroughTap: (sink, ir, ctx) => new ChatPassThrough(sink, ir.includeUsage, ctx.model),
};
