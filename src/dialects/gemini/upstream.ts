// A Gemini provider as the gateway calls it: the model and the method in the URL (streams
// always with `alt=sse`, whatever framing the client asked for), the key in `x-goog-api-key`
// (never in the query string, where logs keep it), the output cap in
// generationConfig.maxOutputTokens, and what passes through when the client speaks Gemini too:
// the upstream's chunks, their usage read on the way (every chunk carries the counts so far), the
// `modelVersion` named as the client asked, and the chunk with finishReason held as the final one.

import { markFinal, type SSEEvent } from '../../stream/sse.js';
import { renamedAnswer } from '../../stream/json-bytes.js';
import type { RenderContext, UpstreamSide, UsageSink } from '../dialect.js';
import { isRecord } from '../openai/shared.js';
import { keyOf, record } from './fields.js';
import { closeArray, frame, frameLast, isArrayStream } from './framing.js';
import { reportsOutput, usageFromGemini } from './usage.js';

/** `models/x`, `tunedModels/x` as they are; a bare name under `models/`; each segment escaped. */
/**
 * The API's root with its version: Google's SDKs take the root (`…googleapis.com`) and add
 * `/v1beta`, operators often write the versioned URL; either works, for chat and embeddings.
 */
export const versionedBase = (baseUrl: string) =>
  /\/v1(?:alpha|beta)?$/.test(baseUrl) ? baseUrl : `${baseUrl}/v1beta`;

export const modelPath = (model: string) =>
  (model.includes('/') ? model : `models/${model}`).split('/').map(encodeURIComponent).join('/');

/** Text a chunk produced, for counting when no usage says it. */
function noteParts(sink: UsageSink, candidate: Record<string, unknown> | undefined): void {
  const parts = isRecord(candidate?.content) ? candidate.content.parts : undefined;
  for (const p of Array.isArray(parts) ? parts : []) {
    if (!isRecord(p)) continue;
    if (typeof p.text === 'string' && p.text !== '') sink.noteText(p.text);
    else if (isRecord(p.functionCall))
      sink.noteText(`${String(p.functionCall.name ?? '')}${JSON.stringify(p.functionCall.args ?? {})}`);
  }
}

export function geminiPassThrough(sink: UsageSink, ctx: RenderContext): (ev: SSEEvent) => Buffer {
  const array = isArrayStream(ctx);
  return (ev) => {
    let chunk: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(ev.data);
      if (!isRecord(parsed)) return array ? frame(ctx, ev.data) : ev.raw;
      chunk = parsed;
    } catch {
      return array ? frame(ctx, ev.data) : ev.raw;
    }
    if (isRecord(chunk.error)) {
      sink.failed = true;
      return markFinal(array ? closeArray(ctx, ev.data) : ev.raw);
    }
    const u = chunk.usageMetadata;
    const usage = usageFromGemini(u);
    // Intermediate chunks of some models count only the prompt so far: their output is counted from the text.
    if (usage) sink.noteUsage(reportsOutput(u) ? usage : { input: usage.input, cacheRead: usage.cacheRead });
    const candidate =
      Array.isArray(chunk.candidates) && isRecord(chunk.candidates[0]) ? chunk.candidates[0] : undefined;
    noteParts(sink, candidate);
    const data =
      typeof chunk.modelVersion === 'string' && chunk.modelVersion !== ctx.model
        ? renamedAnswer(ev.data, chunk, ctx.model, 'modelVersion')
        : ev.data;
    const last = candidate?.finishReason !== undefined || (!candidate && isRecord(chunk.promptFeedback));
    if (last) return markFinal(frameLast(ctx, data));
    return array || data !== ev.data ? frame(ctx, data) : ev.raw;
  };
}

export const upstream: UpstreamSide = {
  endpoint: (baseUrl, { model, stream }) =>
    `${versionedBase(baseUrl)}/${modelPath(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  headers: (key): Record<string, string> => (key ? { 'x-goog-api-key': key } : {}),
  // A bad key is a 400 INVALID_ARGUMENT whose ErrorInfo reason says so.
  refusedCredentials: (status, text) => status === 400 && /"API_KEY_(?:INVALID|EXPIRED)"/.test(text),
  setOutputCap(body, cap) {
    const key = keyOf(body, 'generationConfig');
    const config = { ...(record(body[key]) ?? {}) };
    delete config.max_output_tokens;
    config.maxOutputTokens = cap;
    body[key] = config;
  },
  prepareForward(body) {
    // The model travels in the URL; Gemini refuses a body field it does not know.
    delete body.model;
  },
  passThroughWhole(text, json, ctx) {
    const usage = usageFromGemini(json.usageMetadata);
    return { out: renamedAnswer(text, json, ctx.model, 'modelVersion'), usage };
  },
  passThroughTap: (sink, _ir, ctx) => ({ event: geminiPassThrough(sink, ctx) }),
};
