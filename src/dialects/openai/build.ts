// IR → a chat-completions body for an upstream that speaks OpenAI chat. The client's side, its
// body → IR, is ./request.ts.

import type { IRContent, IRRequest } from '../ir.js';
import { stringifyToolArguments } from './shared.js';
import { setOutputCap } from './upstream.js';

type OpenAIMessage = Record<string, unknown>;

export function buildRequest(ir: IRRequest, upstreamModel: string): Record<string, unknown> {
  const messages: OpenAIMessage[] = ir.system.map((content) => ({ role: 'system', content }));
  for (const msg of ir.messages) {
    if (msg.role === 'system') messages.push(...systemToOpenAI(msg.content));
    else messages.push(...(msg.role === 'user' ? userToOpenAI(msg.content) : assistantToOpenAI(msg.content)));
  }

  const body: Record<string, unknown> = { model: upstreamModel, messages };
  if (ir.tools && ir.tools.length > 0) {
    body.tools = ir.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        parameters: t.parameters,
      },
    }));
    // OpenAI rejects parallel_tool_calls on a request without tools.
    if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  }
  // OpenAI rejects a tool_choice naming or requiring tools on a request that has none, which is
  // what a translated request is left with when every tool was an Anthropic server tool
  // (web_search…, dropped in the IR). "none" asks for nothing and is kept.
  const hasTools = ir.tools !== undefined && ir.tools.length > 0;
  if (ir.toolChoice && (hasTools || ir.toolChoice.type === 'none')) {
    const choice = ir.toolChoice;
    body.tool_choice = choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
  }
  // Without the provider the model name picks the field; the gateway applies the provider's
  // rule to every upstream body afterwards (upstream.ts capField).
  if (ir.maxTokens !== undefined) setOutputCap(body, ir.maxTokens, undefined, upstreamModel);
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stop && ir.stop.length > 0) body.stop = ir.stop;
  body.stream = ir.stream;
  // Billing needs the counts whatever the client asked for; the encoder drops the chunk
  // again when the client did not want it.
  if (ir.stream) body.stream_options = { include_usage: true };
  if (ir.user !== undefined) body.user = ir.user;
  if (ir.reasoningEffort !== undefined) body.reasoning_effort = ir.reasoningEffort;
  return body;
}

/** A mid-conversation instruction stays a system message at its place. */
function systemToOpenAI(content: IRContent[]): OpenAIMessage[] {
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  return text === '' ? [] : [{ role: 'system', content: text }];
}

function imageUrl(c: Extract<IRContent, { type: 'image' }>): string {
  return c.source.kind === 'base64' ? `data:${c.source.mediaType};base64,${c.source.data}` : c.source.url;
}

function toolResultText(content: string | IRContent[]): string {
  if (typeof content === 'string') return content;
  // OpenAI tool messages take text only; images inside a result cannot be carried over.
  return content
    .filter((c): c is Extract<IRContent, { type: 'text' }> => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

function userToOpenAI(content: IRContent[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  const parts: Array<Record<string, unknown>> = [];
  for (const c of content) {
    if (c.type === 'tool_result')
      out.push({ role: 'tool', tool_call_id: c.toolUseId, content: toolResultText(c.content) });
    else if (c.type === 'text') parts.push({ type: 'text', text: c.text });
    else if (c.type === 'image') parts.push({ type: 'image_url', image_url: { url: imageUrl(c) } });
  }
  if (parts.length === 1 && parts[0]!.type === 'text') out.push({ role: 'user', content: parts[0]!.text });
  else if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function assistantToOpenAI(content: IRContent[]): OpenAIMessage[] {
  const text = content
    .filter((c): c is Extract<IRContent, { type: 'text' }> => c.type === 'text')
    .map((c) => c.text)
    .join('');
  const calls = content
    .filter((c): c is Extract<IRContent, { type: 'tool_use' }> => c.type === 'tool_use')
    .map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: stringifyToolArguments(c.input) },
    }));
  // Thinking blocks are dropped: OpenAI-dialect upstreams do not take reasoning back.
  const msg: OpenAIMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) msg.tool_calls = calls;
  return [msg];
}
