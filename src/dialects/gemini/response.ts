// Whole answers: an upstream's GenerateContentResponse → IR, and the IR answer → one for the
// client. A candidate's parts map to IR blocks: `thought` parts to thinking, `functionCall` parts
// to tool_use (ids made when Gemini 2.x gives none), each thoughtSignature kept on the part it
// came with. Signatures on plain text parts (Gemini 3 puts one on the last, often empty, part)
// are only good at Gemini, which a translated answer never goes back to: they are dropped.

import { randomBase62 } from '../../wire.js';
import { GatewayError } from '../../errors.js';
import type { RenderContext } from '../dialect.js';
import { ZERO_USAGE, type IRContent, type IRResponse, type IRStopReason } from '../ir.js';
import { isRecord } from '../openai/shared.js';
import { usageFromGemini, usageToGemini } from './usage.js';

export const newCallId = () => `call_${randomBase62(24)}`;

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** Gemini's finishReason → IR. A function call ends with STOP, like any answer. */
export function stopReasonToIR(reason: unknown, calledTools: boolean): IRStopReason | null {
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'refusal';
  if (reason === undefined || reason === null) return null;
  // STOP, and the odd ends (MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE…) with no IR counterpart.
  return calledTools ? 'tool_use' : 'end_turn';
}

export function stopReasonFromIR(reason: IRStopReason | null): string {
  if (reason === 'max_tokens') return 'MAX_TOKENS';
  if (reason === 'refusal') return 'SAFETY';
  return 'STOP';
}

export function partsToIR(parts: unknown): IRContent[] {
  const out: IRContent[] = [];
  for (const p of Array.isArray(parts) ? parts : []) {
    if (!isRecord(p)) continue;
    const signature =
      typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;
    if (isRecord(p.functionCall)) {
      const fc = p.functionCall;
      const block: IRContent = {
        type: 'tool_use',
        id: typeof fc.id === 'string' && fc.id !== '' ? fc.id : newCallId(),
        name: String(fc.name ?? ''),
        input: isRecord(fc.args) ? fc.args : {},
      };
      if (signature) block.signature = signature;
      out.push(block);
    } else if (typeof p.text === 'string') {
      if (p.thought === true)
        out.push(
          signature ? { type: 'thinking', thinking: p.text, signature } : { type: 'thinking', thinking: p.text },
        );
      else if (p.text !== '') {
        const last = out.at(-1);
        if (last?.type === 'text') last.text += p.text;
        else out.push({ type: 'text', text: p.text });
      }
    }
  }
  return out;
}

export function parseResponse(body: unknown): IRResponse {
  if (!isRecord(body)) throw new GatewayError('upstream', 'The upstream returned a malformed answer.');
  const candidate = Array.isArray(body.candidates) && isRecord(body.candidates[0]) ? body.candidates[0] : undefined;
  const content = partsToIR(isRecord(candidate?.content) ? candidate.content.parts : undefined);
  // A prompt refused outright has no candidate, only promptFeedback.blockReason.
  const blocked = !candidate && isRecord(body.promptFeedback) && body.promptFeedback.blockReason !== undefined;
  return {
    id: typeof body.responseId === 'string' ? body.responseId : '',
    model: typeof body.modelVersion === 'string' ? body.modelVersion : '',
    content,
    stopReason: blocked
      ? 'refusal'
      : stopReasonToIR(
          candidate?.finishReason ?? 'STOP',
          content.some((c) => c.type === 'tool_use'),
        ),
    usage: usageFromGemini(body.usageMetadata) ?? { ...ZERO_USAGE },
  };
}

/** IR blocks → Gemini parts. */
export function partsFromIR(content: IRContent[]): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  for (const c of content) {
    if (c.type === 'text') parts.push({ text: c.text });
    else if (c.type === 'thinking')
      parts.push(
        c.signature
          ? { text: c.thinking, thought: true, thoughtSignature: c.signature }
          : { text: c.thinking, thought: true },
      );
    else if (c.type === 'tool_use') parts.push(functionCallPart(c.id, c.name, c.input, c.signature));
  }
  return parts;
}

export function functionCallPart(id: string, name: string, args: unknown, signature?: string): Record<string, unknown> {
  const part: Record<string, unknown> = { functionCall: { id, name, args: isRecord(args) ? args : {} } };
  if (signature) part.thoughtSignature = signature;
  return part;
}

export function renderResponse(res: IRResponse, ctx: RenderContext) {
  const parts = partsFromIR(res.content);
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: stopReasonFromIR(res.stopReason), index: 0 }],
    usageMetadata: usageToGemini(res.usage),
    modelVersion: ctx.model,
    responseId: ctx.id,
  };
}
