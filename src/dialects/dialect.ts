// What every wire dialect provides. The client side turns a surface's request into the IR
// and the IR answer back into the surface's wire form; the upstream side does the reverse
// for providers that speak the dialect.

import type { OperatorFunction } from 'rxjs';
import type { GatewayError } from '../errors.js';
import type { SSEEvent } from '../stream/sse.js';
import type { IRRequest, IRResponse, IRStreamEvent, IRTool, IRUsage } from './ir.js';

export type DialectName = 'openai' | 'anthropic';

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

export interface Dialect {
  name: DialectName;
  /** Validate a client request body (valibot) and map it to the IR; throws GatewayError('invalid_request'). */
  parseRequest(body: unknown): IRRequest;
  /** IR answer → the surface's JSON body. */
  renderResponse(res: IRResponse, ctx: RenderContext): unknown;
  /** IR events → the surface's SSE bytes, terminator included ([DONE] / message_stop). */
  encodeStream(ctx: RenderContext): OperatorFunction<IRStreamEvent, Buffer>;
  /** The surface's error envelope and status for a gateway error. */
  errorResponse(err: GatewayError, requestId: string): { status: number; body: unknown };
  /** The surface's mid-stream error event. */
  errorEvent(err: GatewayError, requestId: string): Buffer;

  /** IR → an upstream request body for a provider of this dialect. */
  buildRequest(ir: IRRequest, upstreamModel: string): Record<string, unknown>;
  /** An upstream's JSON answer → IR. */
  parseResponse(body: unknown): IRResponse;
  /** An upstream's SSE events → IR events. */
  decodeStream(): OperatorFunction<SSEEvent, IRStreamEvent>;
  /** The human message inside an upstream error body of this dialect, if any. */
  upstreamErrorMessage(body: unknown): string | undefined;
  /** Images and fixed overheads of a request body in this dialect, client's or upstream's. */
  promptParts(body: unknown): PromptParts;
}
