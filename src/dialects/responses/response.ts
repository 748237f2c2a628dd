// Non-streamed answers: IR → a `response` object for the client, and an upstream's `response`
// → IR. The output items (message, function_call, custom_tool_call, reasoning) are made here and
// by the stream encoder alike, so a streamed answer ends as the whole one would.

import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { RenderContext } from '../dialect.js';
import { ZERO_USAGE, type IRContent, type IRResponse, type IRStopReason, type IRTool, type IRUsage } from '../ir.js';
import { isRecord, parseToolArguments, stringifyToolArguments } from '../openai/shared.js';
import { compactionItem } from './compaction.js';
import { NAMESPACE_JOIN } from './request.js';
import { usageFromResponses, usageToResponses } from './usage.js';

/** An item id in the vendor's form (`msg_…`, `fc_…`, `rs_…`, `ctc_…`). */
export const itemId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export type Item = Record<string, unknown>;

/** How a tool call is shown: freeform tools as `custom_tool_call` with raw text, the rest as `function_call`. */
export function toolCallItem(
  id: string,
  callId: string,
  irName: string,
  input: unknown,
  tools: ReadonlyMap<string, IRTool> | undefined,
  status = 'completed',
): Item {
  const tool = tools?.get(irName);
  const name = tool?.namespace ? irName.slice(tool.namespace.length + NAMESPACE_JOIN.length) : irName;
  const ns = tool?.namespace ? { namespace: tool.namespace } : {};
  if (tool?.freeform) {
    const text = isRecord(input) && typeof input.input === 'string' ? input.input : stringifyToolArguments(input);
    return { id, type: 'custom_tool_call', status, call_id: callId, name, input: text, ...ns };
  }
  return { id, type: 'function_call', status, call_id: callId, name, arguments: stringifyToolArguments(input), ...ns };
}

export function messageItem(id: string, text: string, status = 'completed'): Item {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

export function reasoningItem(id: string, summary: string): Item {
  return { id, type: 'reasoning', summary: summary === '' ? [] : [{ type: 'summary_text', text: summary }] };
}

export function outputItems(content: IRContent[], tools: ReadonlyMap<string, IRTool> | undefined): Item[] {
  const out: Item[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      const last = out.at(-1);
      // Consecutive text blocks are one message, as the vendor answers.
      if (last?.type === 'message') ((last.content as Item[])[0]!.text as string) += block.text;
      else out.push(messageItem(itemId('msg'), block.text));
    } else if (block.type === 'thinking') out.push(reasoningItem(itemId('rs'), block.thinking));
    else if (block.type === 'tool_use')
      out.push(
        toolCallItem(itemId(tools?.get(block.name)?.freeform ? 'ctc' : 'fc'), block.id, block.name, block.input, tools),
      );
  }
  return out;
}

/** The whole `response` object, as the API returns it and as its stream's terminal event carries it. */
export function responseObject(
  ctx: RenderContext,
  status: string,
  output: Item[],
  usage: IRUsage | null,
  stopReason: IRStopReason | null,
): Record<string, unknown> {
  const echo = ctx.echo ?? {};
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: null,
    incomplete_details:
      status === 'incomplete' ? { reason: stopReason === 'refusal' ? 'content_filter' : 'max_output_tokens' } : null,
    instructions: echo.instructions ?? null,
    max_output_tokens: echo.max_output_tokens ?? null,
    metadata: echo.metadata ?? {},
    model: ctx.model,
    output,
    parallel_tool_calls: echo.parallel_tool_calls ?? true,
    previous_response_id: echo.previous_response_id ?? null,
    reasoning: echo.reasoning ?? { effort: null, summary: null },
    store: echo.store ?? true,
    temperature: echo.temperature ?? 1,
    text: echo.text ?? { format: { type: 'text' } },
    tool_choice: echo.tool_choice ?? 'auto',
    tools: echo.tools ?? [],
    top_p: echo.top_p ?? 1,
    truncation: echo.truncation ?? 'disabled',
    usage: usage ? usageToResponses(usage) : null,
    user: echo.user ?? null,
  };
}

/** Completed, or incomplete where the answer was cut (the output cap, a content filter). */
export const statusOf = (reason: IRStopReason | null) =>
  reason === 'max_tokens' || reason === 'refusal' ? 'incomplete' : 'completed';

export function renderResponse(res: IRResponse, ctx: RenderContext) {
  const output = ctx.compaction
    ? [compactionItem(res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''))]
    : outputItems(res.content, ctx.clientTools);
  const body = responseObject(ctx, statusOf(res.stopReason), output, res.usage, res.stopReason);
  ctx.onFinal?.(body);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Upstream `response` → IR

export function contentFromOutput(output: unknown): IRContent[] {
  const content: IRContent[] = [];
  for (const item of Array.isArray(output) ? output : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      const text = item.content
        .map((p: unknown) =>
          isRecord(p) && (p.type === 'output_text' || p.type === 'refusal') ? String(p.text ?? p.refusal ?? '') : '',
        )
        .join('');
      if (text !== '') content.push({ type: 'text', text });
    } else if (item.type === 'reasoning') {
      const summary = Array.isArray(item.summary)
        ? item.summary.map((s: unknown) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n')
        : '';
      if (summary !== '') content.push({ type: 'thinking', thinking: summary });
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const name =
        typeof item.namespace === 'string' && item.namespace !== ''
          ? `${item.namespace}${NAMESPACE_JOIN}${item.name}`
          : String(item.name ?? '');
      const input =
        item.type === 'custom_tool_call'
          ? { input: typeof item.input === 'string' ? item.input : '' }
          : parseToolArguments(typeof item.arguments === 'string' ? item.arguments : '');
      content.push({ type: 'tool_use', id: String(item.call_id ?? item.id ?? ''), name, input });
    }
  }
  return content;
}

export function stopReasonOf(body: Record<string, unknown>, content: IRContent[]): IRStopReason | null {
  if (body.status === 'incomplete') {
    const reason = isRecord(body.incomplete_details) ? body.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'refusal' : 'max_tokens';
  }
  return content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

export function parseResponse(body: unknown): IRResponse {
  if (!isRecord(body) || !Array.isArray(body.output))
    throw new GatewayError('upstream', 'The upstream returned a malformed response object.');
  const content = contentFromOutput(body.output);
  return {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    content,
    stopReason: stopReasonOf(body, content),
    usage: usageFromResponses(body.usage) ?? { ...ZERO_USAGE },
  };
}
