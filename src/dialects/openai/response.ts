// Non-streamed answers: IR → a `chat.completion` for the client, and an upstream's
// `chat.completion` → IR.

import { GatewayError } from '../../errors.js';
import type { RenderContext } from '../dialect.js';
import { ZERO_USAGE, type IRContent, type IRResponse } from '../ir.js';
import {
  finishReasonFromIR,
  finishReasonToIR,
  isRecord,
  parseToolArguments,
  stringifyToolArguments,
} from './shared.js';
import { usageFromOpenAI, usageToOpenAI } from './usage.js';

export function renderResponse(res: IRResponse, ctx: RenderContext) {
  const texts: string[] = [];
  const thoughts: string[] = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for (const block of res.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'thinking') thoughts.push(block.thinking);
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: stringifyToolArguments(block.input) },
      });
    }
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    // OpenAI sends null content on a pure tool-call answer; clients test for it.
    content: texts.length === 0 && toolCalls.length > 0 ? null : texts.join(''),
    refusal: null,
  };
  if (thoughts.length > 0) message.reasoning_content = thoughts.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: ctx.id,
    object: 'chat.completion' as const,
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonFromIR(res.stopReason) }],
    usage: usageToOpenAI(res.usage),
  };
}

export function parseResponse(body: unknown): IRResponse {
  const choices = isRecord(body) ? body.choices : undefined;
  // n > 1 is not something the gateway asks for; the first choice is the answer.
  const choice = Array.isArray(choices) ? (choices.find((c) => isRecord(c) && c.index === 0) ?? choices[0]) : undefined;
  if (!isRecord(body) || !isRecord(choice) || !isRecord(choice.message)) {
    throw new GatewayError('upstream', 'The upstream returned a malformed chat completion.');
  }
  const msg = choice.message;
  const content: IRContent[] = [];
  // vLLM and DeepSeek call it reasoning_content, OpenRouter reasoning.
  const reasoning = typeof msg.reasoning_content === 'string' ? msg.reasoning_content : msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'thinking', thinking: reasoning });
  const text = contentText(msg.content);
  if (text !== '') content.push({ type: 'text', text });
  if (typeof msg.refusal === 'string' && msg.refusal !== '') content.push({ type: 'text', text: msg.refusal });
  if (Array.isArray(msg.tool_calls)) {
    msg.tool_calls.forEach((call: unknown, i: number) => {
      if (!isRecord(call) || !isRecord(call.function)) return;
      const fn = call.function;
      content.push({
        type: 'tool_use',
        id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${i}`,
        name: typeof fn.name === 'string' ? fn.name : '',
        input: parseToolArguments(typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {})),
      });
    });
  }
  if (isRecord(msg.function_call) && typeof msg.function_call.name === 'string') {
    const fc = msg.function_call;
    content.push({
      type: 'tool_use',
      id: fc.name as string,
      name: fc.name as string,
      input: parseToolArguments(typeof fc.arguments === 'string' ? fc.arguments : ''),
    });
  }
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    content,
    stopReason: finishReasonToIR(choice.finish_reason),
    usage: usageFromOpenAI(body.usage) ?? { ...ZERO_USAGE },
  };
}

/** A few OpenAI-compatible vendors answer with content parts instead of a string. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: unknown) => (isRecord(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : ''))
    .join('');
}
