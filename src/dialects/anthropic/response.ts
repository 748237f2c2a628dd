// Whole (non-streamed) answers: IR → a /v1/messages body, and an Anthropic upstream's body → IR.

import { GatewayError } from '../../errors.js';
import type { RenderContext } from '../dialect.js';
import { ZERO_USAGE, type IRContent, type IRResponse } from '../ir.js';
import { blockFromWire, blockToWire, stopReasonFromWire } from './blocks.js';
import { usageFromAnthropic, usageToAnthropic } from './usage.js';

export function renderResponse(res: IRResponse, ctx: RenderContext) {
  const content = res.content
    // Only blocks an assistant can produce belong in an answer.
    .filter((b) => b.type !== 'image' && b.type !== 'tool_result')
    .map((b) => blockToWire(b, false))
    .filter((b) => b !== null);
  return {
    id: ctx.id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: res.stopReason ?? 'end_turn',
    stop_sequence: res.stopSequence ?? null,
    usage: usageToAnthropic(res.usage),
  };
}

export function parseResponse(body: unknown): IRResponse {
  if (body === null || typeof body !== 'object' || !Array.isArray((body as { content?: unknown }).content)) {
    throw new GatewayError('upstream', 'The upstream returned a malformed message.');
  }
  const msg = body as Record<string, unknown> & { content: unknown[] };
  return {
    id: typeof msg.id === 'string' ? msg.id : '',
    model: typeof msg.model === 'string' ? msg.model : '',
    content: msg.content.map(blockFromWire).filter((b): b is IRContent => b !== null),
    stopReason: stopReasonFromWire(msg.stop_reason),
    stopSequence: typeof msg.stop_sequence === 'string' ? msg.stop_sequence : null,
    usage: { ...ZERO_USAGE, ...usageFromAnthropic(msg.usage) },
  };
}
