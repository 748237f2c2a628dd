// What every wire dialect provides, so that a dialect is one folder plus one line of the
// registry (names.ts, which lists its light half, meta.ts; index.ts loads the rest). The client
// side turns a surface's request into the IR and the IR answer back into the surface's wire
// form, and says what the surface's options cost (its terms); the upstream side does the reverse
// for providers that speak the dialect, and knows how such a provider is addressed,
// authenticated, capped, and how its answers are read when they pass through untouched.
//
// Dialects import nothing from src/inference or src/server but types: the request pipeline
// calls them, never the other way round.

import type { OperatorFunction } from 'rxjs';
import type { Prices, Model } from '../catalogue/index.js';
import type { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import type { TextSink } from '../stream/envelope.js';
import type { SSEEvent } from '../stream/sse.js';
import type { EventTap } from '../stream/pass-through.js';
import type { TextLane } from '../stream/text-lane.js';
import type { IRRequest, IRResponse, IRStreamEvent, IRTool, IRUsage } from './ir.js';
import type { DialectMeta, DialectName } from './names.js';

export interface RenderContext {
  /** The model id the client asked for (what the answer names). */
  model: string;
  /** Response id in the surface's form (`chatcmpl-…` / `msg_…`). */
  id: string;
  /** Unix seconds, for OpenAI's `created`. */
  created: number;
  /** Chat surface: forward the usage chunk (the client set stream_options.include_usage). */
  includeUsage: boolean;
  /**
   * The gateway's request id. The messages surface puts it in a mid-stream error event, whose
   * envelope API.md §1 makes the same as an HTTP error's (`request_id` included).
   */
  requestId?: string;
  /**
   * The client's tools by their IR name, for surfaces whose tool calls look different by tool
   * (Responses: freeform tools answer `custom_tool_call`, namespaced ones carry `namespace`).
   */
  clientTools?: ReadonlyMap<string, IRTool>;
  /** Request fields a surface repeats in its answer (Responses: instructions, tools, store…). */
  echo?: Record<string, unknown>;
  /** Called with the whole answer as the client got it, once it is complete (to store it). */
  onFinal?: (answer: Record<string, unknown>) => void;
  /** What the URL said, on a surface whose URL names the model and the method (Gemini). */
  call?: SurfaceCall;
  /** The answer is a compaction of the conversation (IRRequest.compaction): its text is the summary. */
  compaction?: boolean;
}

/**
 * What a surface's URL says of a request, where the body does not say it: Gemini names the model
 * and the method (`models/{model}:streamGenerateContent?alt=sse`) in the path.
 */
export interface SurfaceCall {
  /** An answer (generate) or a token count. */
  method: 'generate' | 'count_tokens';
  model: string;
  stream: boolean;
  /** A stream's content type, when it is not SSE (Gemini without `alt=sse`: one JSON array). */
  streamType?: string;
  /** The query string a same-dialect upstream is sent (the surface's own parameters and the key left out). */
  query: string;
}

/** Where an upstream request goes: the upstream's own name of the model, and whether it streams. */
export interface UpstreamTarget {
  model: string;
  stream: boolean;
}

/** An image inside a request body: the object holding its payload, and the payload's key. */
export interface ImageSlot {
  holder: Record<string, unknown>;
  /** '' when the image has no inline payload (a file id). */
  key: string;
}

/** What the hold needs of a body in this dialect beyond its bytes (billing/prompt-size.ts). */
export interface PromptParts {
  /** Images, only where this dialect puts them: each is billed as an image, not as its bytes. */
  images: ImageSlot[];
  /** Input the vendor adds that no byte of the body shows (typed tools' system prompts). */
  overheadTokens: number;
}

/** The configuration the dialects read (the client's headers, choices, and their defaults). */
/** The settings a dialect reads, by their names in src/config.ts (which sits above the dialects). */
export interface DialectLimits {
  MAX_N: number;
  ANTHROPIC_VERSIONS: readonly string[];
  ANTHROPIC_PRICED_BETAS: readonly string[];
}

export type { MaxTokensField } from '../catalogue/index.js';
import type { MaxTokensField } from '../catalogue/index.js';

/** What the upstream half reads of a catalogue provider (catalogue/index.ts `Provider` has it). */
export interface UpstreamProvider {
  /** base_url's host name. */
  host: string;
  /** The catalogue's `max_tokens_field`, when the operator set one. */
  maxTokensField?: MaxTokensField;
}

/**
 * What a pass-through tap reports to; the stream meter implements it. Declared here so that a
 * dialect's tap needs nothing from src/inference.
 */
export interface UsageSink extends TextSink {
  noteUsage(u: Partial<IRUsage> | null | undefined): void;
  /** The upstream reported an error inside the stream. */
  failed: boolean;
  /** The whole answer, where the stream's last event carries it (Responses): kept for continuations. */
  noteAnswer?(answer: Record<string, unknown>): void;
}

/** The upstream half: a provider of this dialect, as the gateway calls it. */
export interface UpstreamSide {
  /**
   * The URL requests are posted to, from the catalogue's base_url (no trailing slash). Most
   * dialects name the model and streaming in the body and ignore `target`; Gemini's URL carries both.
   */
  endpoint(baseUrl: string, target: UpstreamTarget): string;
  /** Where this vendor counts a request's tokens; absent: it does not. */
  countTokensEndpoint?(baseUrl: string): string;
  /**
   * Auth and protocol headers. `forwarded`: the client's vetted headers (ClientTerms), given only
   * when the client speaks this dialect too; otherwise the dialect's defaults apply.
   */
  headers(
    key: string | undefined,
    forwarded: Record<string, string> | undefined,
    limits: DialectLimits,
  ): Record<string, string>;
  /** An error answer that refuses the gateway's own key though its status says otherwise (Gemini's 400 API_KEY_INVALID). */
  refusedCredentials?(status: number, text: string): boolean;
  /** Puts the output cap reserved for in the field this provider honours, and only there. */
  setOutputCap(body: Record<string, unknown>, cap: number, provider: UpstreamProvider, upstreamModel: string): void;
  /** Same-dialect forwarding: what the client's body needs on top (billing's usage reports). */
  prepareForward?(body: Record<string, unknown>, ir: IRRequest): void;
  /**
   * Same-dialect whole answer: the bytes for the client, and the usage it reports (null: none).
   * The answer names `ctx.model`, the catalogue's id the client asked for, not the upstream's.
   */
  passThroughWhole(text: string, json: Record<string, any>, ctx: RenderContext): { out: string; usage: IRUsage | null };
  /**
   * Same-dialect stream: each upstream event's bytes for the client (null: dropped), usage and
   * text noted on the way. Runs once per event on the hot path: only the events that can carry
   * usage are parsed. Every event that names the model names `model` (the catalogue's id the
   * client asked for), not the upstream's.
   */
  passThroughTap(sink: UsageSink, ir: IRRequest, ctx: RenderContext): EventTap;
}

/** What a client request costs beyond its prompt, as this surface's fields say. */
export interface ClientTerms {
  pricing: Prices;
  officialPricing: Prices;
  /** Output tokens per choice: what the upstream is told, and what is reserved for. */
  outputCap: number;
  n: number;
  /** Output billed beyond the cap (OpenAI's rejected prediction tokens). */
  extraOutput: number;
  /** Charged per request on top of the tokens. */
  feeNano: bigint;
  /** Held, not charged unless used (per-call tools bounded by max_uses). */
  holdFees: bigint;
  audioIn: boolean;
  audioOut: boolean;
  /** The client's vetted headers for an upstream of this same dialect. */
  forwardHeaders?: Record<string, string>;
  /** Hosted tools the model sells, kept in the body: only an upstream of this dialect runs them. */
  hosted?: string[];
  /** Hosted tools the model does not sell, taken out of the body (named in the answer). */
  dropped?: string[];
}

/**
 * The client half of a dialect the gateway also serves: its inference route, as
 * src/inference/surfaces.ts serves it (there bound to its dialect and error rendering, as a `Surface`).
 */
export interface ClientSide {
  /**
   * The surface's name: the usage record's `surface` column and the route's name. A public
   * name of its own (`chat` for the `openai` dialect): stored rows and the API docs carry it.
   */
  name: string;
  /** The POST route (a uWS pattern: Gemini's ends in `*`, its model and method read by `call`). */
  path: string;
  /** More POST routes served the same way (Gemini's `/v1/` spelling of its `/v1beta/` paths). */
  paths?: readonly string[];
  /** What the URL says of the request (model, method, streaming); absent: the body says it all. */
  call?(ex: Exchange): SurfaceCall;
  /** The catalogue in this surface's own list shape (GET `path` and `path/{id}`), when it has one. */
  models?: {
    path: string;
    /** A request to the shared `/v1/models` that comes from this surface's clients (by how it sends its key). */
    asks(ex: Exchange): boolean;
    list(models: readonly Model[], query: URLSearchParams): unknown;
    one(model: Model): unknown;
  };
  /** The answer to a token count (`call` method `count_tokens`) in this surface's shape. */
  countAnswer?(tokens: number): unknown;
  /** The service key as this surface's clients send it. */
  key(ex: Exchange): string | undefined;
  /** The authentication error's message when no key came. */
  missingKey: string;
  /** A translated answer's id, in this surface's form. */
  newId(): string;
  /** Headers on every answer and error of the surface. */
  answerHeaders(requestId: string): Record<string, string>;
  /** Sent on a stream after PING_INTERVAL_MS of silence; absent: no keep-alive. */
  ping?: Buffer;
  /** The client's vetted headers for a same-dialect upstream (400 for a value the gateway does not sell). */
  forwardHeaders?(headers: Record<string, string>, model: Model, limits: DialectLimits): Record<string, string>;
  /**
   * Output cap, choices, priced options and forwarded headers of a client body (400s for what is
   * not sold); hosted tools the model does not sell are taken out of `body` and named.
   */
  clientTerms(
    body: Record<string, unknown>,
    model: Model,
    headers: Record<string, string>,
    limits: DialectLimits,
  ): ClientTerms;
}

export interface Dialect {
  /** The catalogue's `dialect` value for providers that speak it: the dialect's one name (its meta.ts). */
  name: DialectName;
  /** Absent for a dialect the gateway only speaks to upstreams. */
  surface?: ClientSide;
  upstream: UpstreamSide;
  /** How its providers are called for POST /v1/embeddings; present exactly when its meta.ts says `embeddings: true`. */
  embeddings?: EmbeddingsUpstream;
  /**
   * Validate a client request body (valibot) and map it to the IR; throws GatewayError('invalid_request').
   * `call`: what the URL said, on a surface that has it.
   */
  parseRequest(body: unknown, call?: SurfaceCall): IRRequest;
  /** IR answer → the surface's JSON body. */
  renderResponse(res: IRResponse, ctx: RenderContext): unknown;
  /**
   * IR events → the surface's SSE bytes, terminator included ([DONE] / message_stop). With a
   * lane, the encoder may say how it writes a text delta (stream/text-lane.ts).
   */
  encodeStream(ctx: RenderContext, lane?: TextLane): OperatorFunction<IRStreamEvent, Buffer>;
  /** The surface's error envelope and status for a gateway error. */
  errorResponse(err: GatewayError, requestId: string): { status: number; body: unknown };
  /** The surface's mid-stream error event (`ctx`: the stream's, for a framing that depends on what was sent). */
  errorEvent(err: GatewayError, requestId: string, ctx?: RenderContext): Buffer;

  /** IR → an upstream request body for a provider of this dialect. */
  buildRequest(ir: IRRequest, upstreamModel: string): Record<string, unknown>;
  /** An upstream's JSON answer → IR. */
  parseResponse(body: unknown): IRResponse;
  /** An upstream's SSE events → IR events. With a lane, the decoder may say which events are a plain text delta. */
  decodeStream(lane?: TextLane): OperatorFunction<SSEEvent, IRStreamEvent>;
  /** The human message inside an upstream error body of this dialect, if any. */
  upstreamErrorMessage(body: unknown): string | undefined;
  /** Images and fixed overheads of a request body in this dialect, client's or upstream's. */
  promptParts(body: unknown): PromptParts;
}

/**
 * A dialect as its folder's index.ts exports it: the name its meta.ts gives, and an embeddings
 * adapter exactly when its meta.ts says its providers serve embeddings (the light list the
 * catalogue reads and the adapters cannot disagree).
 */
export type DialectOf<M extends DialectMeta> = Dialect & { name: M['name'] } & (M['embeddings'] extends true
    ? { embeddings: EmbeddingsUpstream }
    : { embeddings?: undefined });

// ------------------------------------------------------------------ embeddings
// Embeddings have no IR: a request is a list of inputs and a few settings, an answer a list of
// vectors. A dialect with an embeddings endpoint has an adapter in its folder (embeddings.ts).

/** One input: text, or token ids of the upstream's tokenizer. */
export type EmbeddingInput = string | number[];

/** A client's request, validated. */
export interface EmbeddingsRequest {
  /** The client's body as it came (a same-dialect upstream is sent it, bar `model`). */
  body: Record<string, unknown>;
  inputs: EmbeddingInput[];
  /** Some input is token ids, which only an upstream of the same tokenizer can read. */
  tokenInputs: boolean;
  dimensions?: number;
  encodingFormat: 'float' | 'base64';
}

/** An upstream's answer: one vector per input, in order, as floats or as base64 of little-endian float32. */
export interface UpstreamEmbeddings {
  vectors: (number[] | string)[];
  /** The input tokens the upstream counted; null when it does not say. */
  promptTokens: number | null;
}

export interface EmbeddingsUpstream {
  /** Most inputs one upstream request may carry. */
  maxInputs: number;
  /** Whether token-id inputs can be sent (an upstream that takes text only cannot). */
  takesTokens: boolean;
  endpoint(baseUrl: string, upstreamModel: string): string;
  headers(key: string | undefined): Record<string, string>;
  body(req: EmbeddingsRequest, upstreamModel: string): Record<string, unknown>;
  /** The answer's vectors and usage; undefined when it is not an embeddings answer of this dialect. */
  parse(json: unknown): UpstreamEmbeddings | undefined;
}
