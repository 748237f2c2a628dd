// Turns a Plan into each vendor's wire format, streamed or whole, and builds the vendors'
// error envelopes. Shapes follow the recorded traffic in test/fixtures.

import {
  FAKE_SIGNATURE,
  randomId,
  runText,
  type Dialect,
  type Plan,
  type StopReason,
  type TextRun,
  type ToolCall,
} from './scenarios.js';

/**
 * A stream is a list of segments. A string or Buffer goes out as one write, at once; a run is a
 * sequence of deltas produced on demand, one write each, which is what pacing and backpressure
 * act on. Producing deltas lazily keeps a 10,000-token stream from holding 10,000 strings.
 */
export interface Run {
  count: number;
  frame(i: number): string | Buffer;
}
export type Segment = string | Buffer | Run;

export interface WireContext {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
}

const FINISH_REASON: Record<StopReason, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
};

const json = JSON.stringify;

// ---------------------------------------------------------------- OpenAI chat completions

function openaiUsage(plan: Plan): object {
  return {
    prompt_tokens: plan.promptTokens,
    completion_tokens: plan.outputTokens,
    total_tokens: plan.promptTokens + plan.outputTokens,
    prompt_tokens_details: { cached_tokens: plan.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: plan.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function openaiCompletion(plan: Plan, ctx: WireContext): object {
  let content: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: object[] = [];
  for (const b of plan.blocks) {
    if (b.kind === 'text') content = (content ?? '') + runText(b);
    else if (b.kind === 'thinking') reasoning = (reasoning ?? '') + runText(b);
    else {
      toolCalls.push({ id: b.openaiId, type: 'function', function: { name: b.name, arguments: b.args.join('') } });
    }
  }
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (reasoning !== null) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  message.refusal = null;
  message.annotations = [];
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: Array.from({ length: plan.choices }, (_, index) => ({
      index,
      message,
      logprobs: null,
      finish_reason: FINISH_REASON[plan.stopReason],
    })),
    ...(plan.reportUsage ? { usage: openaiUsage(plan) } : {}),
    service_tier: 'default',
    system_fingerprint: 'fp_fakeupstream',
  };
}

export function openaiStream(plan: Plan, ctx: WireContext): Segment[] {
  // Everything around `delta` is identical in every chunk of a stream, so it is built once and
  // each delta costs one concatenation. `usage: null` in every chunk mirrors what OpenAI sends
  // when include_usage is on, and catches clients that take any `usage` key as the usage chunk.
  const head =
    `data: {"id":${json(ctx.id)},"object":"chat.completion.chunk","created":${ctx.created},` +
    `"model":${json(ctx.model)},"system_fingerprint":"fp_fakeupstream","choices":[{"index":0,"delta":`;
  const usageNull = ctx.includeUsage ? ',"usage":null' : '';
  const tail = `,"logprobs":null,"finish_reason":null}]${usageNull}}\n\n`;

  const firstIsTool = plan.blocks[0]?.kind === 'tool';
  const segs: Segment[] = [
    head +
      (firstIsTool ? '{"role":"assistant","content":null}' : '{"role":"assistant","content":"","refusal":null}') +
      tail,
  ];
  let toolIndex = 0;
  for (const b of plan.blocks) {
    if (b.kind === 'tool') {
      const k = toolIndex++;
      segs.push(
        head +
          `{"tool_calls":[{"index":${k},"id":${json(b.openaiId)},"type":"function","function":{"name":${json(b.name)},"arguments":""}}]}` +
          tail,
      );
      const open = `{"tool_calls":[{"index":${k},"function":{"arguments":`;
      segs.push({ count: b.args.length, frame: (i) => head + open + json(b.args[i]) + '}}]}' + tail });
    } else {
      const open = b.kind === 'text' ? '{"content":' : '{"reasoning_content":';
      segs.push({ count: b.count, frame: (i) => head + open + json(b.piece(i)) + '}' + tail });
    }
  }
  if (plan.ending === 'drop') return segs;
  if (plan.ending === 'midstream_error') {
    segs.push(`data: ${json(OPENAI_MIDSTREAM_ERROR)}\n\n`);
    return segs;
  }
  // With n > 1 each text delta is repeated for every choice, and every choice gets its finish.
  if (plan.choices > 1) {
    const k = plan.choices;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i]!;
      if (typeof seg === 'object' && !Buffer.isBuffer(seg)) {
        const run = seg;
        segs[i] = {
          count: run.count * k,
          frame: (j) =>
            String(run.frame(Math.floor(j / k))).replace('"choices":[{"index":0,', `"choices":[{"index":${j % k},`),
        };
      }
    }
  }
  for (let c = 0; c < plan.choices; c++) {
    segs.push(
      head.replace('"choices":[{"index":0,', `"choices":[{"index":${c},`) +
        `{},"logprobs":null,"finish_reason":${json(FINISH_REASON[plan.stopReason])}}]${usageNull}}\n\n`,
    );
  }
  if (ctx.includeUsage && plan.reportUsage) {
    segs.push(
      `data: {"id":${json(ctx.id)},"object":"chat.completion.chunk","created":${ctx.created},` +
        `"model":${json(ctx.model)},"system_fingerprint":"fp_fakeupstream","choices":[],"usage":${json(openaiUsage(plan))}}\n\n`,
    );
  }
  segs.push('data: [DONE]\n\n');
  return segs;
}

const OPENAI_MIDSTREAM_ERROR = {
  error: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    param: null,
    code: null,
  },
};

// ---------------------------------------------------------------- Anthropic messages

function anthropicUsage(plan: Plan, outputTokens: number): Record<string, unknown> {
  return {
    input_tokens: plan.promptTokens - plan.cacheRead,
    cache_creation_input_tokens: plan.cacheCreation,
    cache_read_input_tokens: plan.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: plan.cacheCreation, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
    ...(plan.webSearches > 0 ? { server_tool_use: { web_search_requests: plan.webSearches } } : {}),
  };
}

function toolInput(b: ToolCall): unknown {
  return JSON.parse(b.args.join(''));
}

export function anthropicMessage(plan: Plan, ctx: WireContext): object {
  const content = plan.blocks.map((b) => {
    if (b.kind === 'text') return { type: 'text', text: runText(b) };
    if (b.kind === 'thinking') return { type: 'thinking', thinking: runText(b), signature: FAKE_SIGNATURE };
    return { type: 'tool_use', id: b.anthropicId, name: b.name, input: toolInput(b) };
  });
  return {
    id: ctx.id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: plan.stopReason,
    stop_sequence: plan.stopSequence,
    usage: anthropicUsage(plan, plan.outputTokens),
  };
}

function event(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}

export function anthropicStream(plan: Plan, ctx: WireContext): Segment[] {
  const start = {
    type: 'message_start',
    message: {
      id: ctx.id,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(plan, 1),
    },
  };
  const segs: Segment[] = [event('message_start', json(start))];
  let index = 0;
  for (const b of plan.blocks) {
    const idx = index++;
    let block: object;
    let deltas: Run;
    if (b.kind === 'tool') {
      block = { type: 'tool_use', id: b.anthropicId, name: b.name, input: {} };
      const open = `{"type":"content_block_delta","index":${idx},"delta":{"type":"input_json_delta","partial_json":`;
      deltas = { count: b.args.length, frame: (i) => event('content_block_delta', open + json(b.args[i]) + '}}') };
    } else {
      block = b.kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      deltas = textDeltas(b, idx);
    }
    segs.push(event('content_block_start', json({ type: 'content_block_start', index: idx, content_block: block })));
    if (idx === 0) segs.push(event('ping', '{"type": "ping"}'));
    if (b.kind === 'tool') {
      segs.push(
        event(
          'content_block_delta',
          json({ type: 'content_block_delta', index: idx, delta: { type: 'input_json_delta', partial_json: '' } }),
        ),
      );
    }
    segs.push(deltas);
    if (plan.ending !== 'complete') break;
    if (b.kind === 'thinking') {
      segs.push(
        event(
          'content_block_delta',
          json({
            type: 'content_block_delta',
            index: idx,
            delta: { type: 'signature_delta', signature: FAKE_SIGNATURE },
          }),
        ),
      );
    }
    segs.push(event('content_block_stop', json({ type: 'content_block_stop', index: idx })));
  }
  if (plan.ending === 'drop') return segs;
  if (plan.ending === 'midstream_error') {
    segs.push(event('error', json(ANTHROPIC_MIDSTREAM_ERROR)));
    return segs;
  }
  const usage = anthropicUsage(plan, plan.outputTokens);
  delete usage.cache_creation;
  delete usage.service_tier;
  segs.push(
    event(
      'message_delta',
      json({ type: 'message_delta', delta: { stop_reason: plan.stopReason, stop_sequence: plan.stopSequence }, usage }),
    ),
  );
  segs.push(event('message_stop', '{"type":"message_stop"}'));
  return segs;
}

function textDeltas(b: TextRun, idx: number): Run {
  const open =
    b.kind === 'text'
      ? `{"type":"content_block_delta","index":${idx},"delta":{"type":"text_delta","text":`
      : `{"type":"content_block_delta","index":${idx},"delta":{"type":"thinking_delta","thinking":`;
  return { count: b.count, frame: (i) => event('content_block_delta', open + json(b.piece(i)) + '}}') };
}

const ANTHROPIC_MIDSTREAM_ERROR = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };

// ---------------------------------------------------------------- errors

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const OPENAI_ERRORS: Record<number, { message: string; type: string; param: string | null; code: string | null }> = {
  400: {
    message:
      "This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
  401: {
    message:
      'Incorrect API key provided: bad-key. You can find your API key at https://platform.openai.com/account/api-keys.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  },
  429: {
    message:
      'Rate limit reached for gpt-4 in organization org-fakeupstream on tokens per min (TPM): Limit 10000, Used 9348, Requested 5086. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more.',
    type: 'tokens',
    param: null,
    code: 'rate_limit_exceeded',
  },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    param: null,
    code: null,
  },
  503: {
    message: 'The engine is currently overloaded, please try again later.',
    type: 'server_error',
    param: null,
    code: null,
  },
};

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const ANTHROPIC_MESSAGES: Record<string, string> = {
  invalid_request_error: 'messages: field required',
  authentication_error: 'invalid x-api-key',
  rate_limit_error:
    "This request would exceed your organization's rate limit of 20,000,000 prompt bytes per hour. Please reduce the prompt length or the maximum tokens requested, or try again later.",
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

/** Anthropic's client retries on this header; the values mirror what the vendor sends. */
function shouldRetry(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

export function errorResponse(dialect: Dialect, status: number, message?: string): ErrorResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 429) headers['retry-after'] = '1';
  const requestId = randomRequestId();
  let body: string;
  // The Responses API answers errors in OpenAI's envelope.
  if (dialect === 'openai' || dialect === 'responses') {
    headers['x-request-id'] = requestId;
    const known = OPENAI_ERRORS[status];
    const err = known
      ? { ...known }
      : {
          message: `Fake upstream error ${status}`,
          type: status < 500 ? 'invalid_request_error' : 'server_error',
          param: null,
          code: null,
        };
    if (message !== undefined) {
      err.message = message;
      err.param = null;
      err.code = null;
    }
    if (status === 429) {
      headers['x-ratelimit-limit-requests'] = '500';
      headers['x-ratelimit-limit-tokens'] = '10000';
      headers['x-ratelimit-remaining-requests'] = '499';
      headers['x-ratelimit-remaining-tokens'] = '0';
      headers['x-ratelimit-reset-requests'] = '120ms';
      headers['x-ratelimit-reset-tokens'] = '1s';
    }
    body = json({ error: err });
  } else {
    headers['request-id'] = requestId;
    headers['x-should-retry'] = String(shouldRetry(status));
    const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    const msg = message ?? ANTHROPIC_MESSAGES[type] ?? `Fake upstream error ${status}`;
    // The vendor's overloaded bodies often come without request_id (fixtures/anthropic/errors).
    body =
      status === 529
        ? json({ type: 'error', error: { type, message: msg } })
        : json({ type: 'error', error: { type, message: msg }, request_id: requestId });
  }
  return { status, headers, body };
}

export function randomRequestId(): string {
  return randomId('req_011C', 20);
}
