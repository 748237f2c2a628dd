// The OpenAI Responses API's wire form of a Plan, whole and streamed, after the recorded traffic
// in test/fixtures/openai-responses: every event has an `event:` line equal to its type and a
// sequence_number; only the terminal event (completed, incomplete, failed) carries usage; there
// is no [DONE].

import { randomId, runText, type Plan, type TextRun, type ToolCall } from './scenarios.js';
import type { Segment, WireContext } from './wire.js';

const json = JSON.stringify;

function usage(plan: Plan): object {
  return {
    input_tokens: plan.promptTokens,
    input_tokens_details: { cached_tokens: plan.cacheRead },
    output_tokens: plan.outputTokens,
    output_tokens_details: { reasoning_tokens: plan.reasoningTokens },
    total_tokens: plan.promptTokens + plan.outputTokens,
  };
}

interface ItemIds {
  /** Per block: the output item's id. */
  ids: string[];
}

function itemIds(plan: Plan): ItemIds {
  return {
    ids: plan.blocks.map((b) =>
      b.kind === 'tool' ? randomId('fc_', 24) : b.kind === 'thinking' ? randomId('rs_', 24) : randomId('msg_', 24),
    ),
  };
}

function outputItem(b: TextRun | ToolCall, id: string, done: boolean): Record<string, unknown> {
  if (b.kind === 'tool') {
    return {
      arguments: done ? b.args.join('') : '',
      call_id: b.openaiId,
      id,
      name: b.name,
      status: done ? 'completed' : 'in_progress',
      type: 'function_call',
    };
  }
  if (b.kind === 'thinking') {
    return {
      content: [],
      encrypted_content: null,
      id,
      summary: done ? [{ text: runText(b), type: 'summary_text' }] : [],
      type: 'reasoning',
    };
  }
  const text = { annotations: [], logprobs: [], text: runText(b), type: 'output_text' };
  return {
    content: done ? [text] : [],
    id,
    role: 'assistant',
    status: done ? 'completed' : 'in_progress',
    type: 'message',
  };
}

function responseObject(
  plan: Plan,
  ctx: WireContext,
  status: 'in_progress' | 'completed' | 'incomplete',
  output: object[],
  body: any,
): Record<string, unknown> {
  return {
    id: ctx.id,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body?.instructions ?? null,
    max_output_tokens: body?.max_output_tokens ?? null,
    model: ctx.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: body?.previous_response_id ?? null,
    reasoning: { effort: body?.reasoning?.effort ?? null, summary: body?.reasoning?.summary ?? null },
    service_tier: 'default',
    store: body?.store ?? true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: Array.isArray(body?.tools) ? body.tools : [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'in_progress' || !plan.reportUsage ? null : usage(plan),
    user: null,
    metadata: {},
  };
}

const finalStatus = (plan: Plan) => (plan.stopReason === 'max_tokens' ? 'incomplete' : 'completed');

export function responsesResponse(plan: Plan, ctx: WireContext, body: any): object {
  const { ids } = itemIds(plan);
  const output = plan.blocks.map((b, i) => outputItem(b, ids[i]!, true));
  return responseObject(plan, ctx, finalStatus(plan), output, body);
}

export function responsesStream(plan: Plan, ctx: WireContext, body: any): Segment[] {
  const { ids } = itemIds(plan);
  let seq = 0;
  const event = (type: string, payload: Record<string, unknown>) =>
    `event: ${type}\ndata: ${json({ ...payload, sequence_number: seq++, type })}\n\n`;
  const segs: Segment[] = [
    event('response.created', { response: responseObject(plan, ctx, 'in_progress', [], body) }),
    event('response.in_progress', { response: responseObject(plan, ctx, 'in_progress', [], body) }),
  ];
  plan.blocks.forEach((b, index) => {
    const id = ids[index]!;
    segs.push(event('response.output_item.added', { item: outputItem(b, id, false), output_index: index }));
    if (b.kind === 'tool') {
      const run = b;
      // Sequence numbers of a run are reserved now: frames are made later, on demand.
      const first = seq;
      seq += run.args.length;
      segs.push({
        count: run.args.length,
        frame: (i) =>
          `event: response.function_call_arguments.delta\ndata: ${json({ delta: run.args[i], item_id: id, output_index: index, sequence_number: first + i, type: 'response.function_call_arguments.delta' })}\n\n`,
      });
      segs.push(
        event('response.function_call_arguments.done', {
          arguments: run.args.join(''),
          item_id: id,
          output_index: index,
        }),
      );
    } else if (b.kind === 'thinking') {
      segs.push(
        event('response.reasoning_summary_part.added', {
          item_id: id,
          output_index: index,
          part: { text: '', type: 'summary_text' },
          summary_index: 0,
        }),
      );
      const first = seq;
      seq += b.count;
      segs.push({
        count: b.count,
        frame: (i) =>
          `event: response.reasoning_summary_text.delta\ndata: ${json({ delta: b.piece(i), item_id: id, output_index: index, sequence_number: first + i, summary_index: 0, type: 'response.reasoning_summary_text.delta' })}\n\n`,
      });
      segs.push(
        event('response.reasoning_summary_text.done', {
          item_id: id,
          output_index: index,
          summary_index: 0,
          text: runText(b),
        }),
      );
      segs.push(
        event('response.reasoning_summary_part.done', {
          item_id: id,
          output_index: index,
          part: { text: runText(b), type: 'summary_text' },
          summary_index: 0,
        }),
      );
    } else {
      segs.push(
        event('response.content_part.added', {
          content_index: 0,
          item_id: id,
          output_index: index,
          part: { annotations: [], logprobs: [], text: '', type: 'output_text' },
        }),
      );
      const first = seq;
      seq += b.count;
      segs.push({
        count: b.count,
        frame: (i) =>
          `event: response.output_text.delta\ndata: ${json({ content_index: 0, delta: b.piece(i), item_id: id, logprobs: [], output_index: index, sequence_number: first + i, type: 'response.output_text.delta' })}\n\n`,
      });
      segs.push(
        event('response.output_text.done', {
          content_index: 0,
          item_id: id,
          logprobs: [],
          output_index: index,
          text: runText(b),
        }),
      );
      segs.push(
        event('response.content_part.done', {
          content_index: 0,
          item_id: id,
          output_index: index,
          part: { annotations: [], logprobs: [], text: runText(b), type: 'output_text' },
        }),
      );
    }
    segs.push(event('response.output_item.done', { item: outputItem(b, id, true), output_index: index }));
  });
  if (plan.ending === 'drop') return segs;
  if (plan.ending === 'midstream_error') {
    segs.push(
      event('error', {
        code: 'server_error',
        message: 'The server had an error while processing your request. Sorry about that!',
        param: null,
      }),
    );
    segs.push(
      event('response.failed', {
        response: {
          ...responseObject(plan, ctx, 'in_progress', [], body),
          status: 'failed',
          error: {
            code: 'server_error',
            message: 'The server had an error while processing your request. Sorry about that!',
          },
        },
      }),
    );
    return segs;
  }
  const status = finalStatus(plan);
  const output = plan.blocks.map((b, i) => outputItem(b, ids[i]!, true));
  segs.push(event(`response.${status}`, { response: responseObject(plan, ctx, status, output, body) }));
  return segs;
}
