// Shared by the messages-surface tests (test/messages/): the wire rules of an Anthropic event stream, a tiny
// SSE reader that does not reuse the gateway's own parser, reference readings of the recorded
// fixtures (what the vendor said, computed straight from the file), and the billing formula.

import { PRICES } from './gateway.js';

export interface RawEvent {
  /** The `event:` line, when there is one. */
  event?: string;
  /** The data payload, parsed when it is JSON, else the raw text. */
  data: any;
}

/** Splits an SSE body into events; independent from src/stream/sse.ts on purpose. */
export function readSSE(text: string): RawEvent[] {
  const out: RawEvent[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split(/\n\n+/)) {
    if (block.trim() === '') continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) continue;
    const joined = data.join('\n');
    let parsed: any = joined;
    try {
      parsed = JSON.parse(joined);
    } catch {
      // [DONE] and the like stay text
    }
    out.push(event === undefined ? { data: parsed } : { event, data: parsed });
  }
  return out;
}

const DELTA_FOR_BLOCK: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  redacted_thinking: [],
  tool_use: ['input_json_delta'],
};

/**
 * Everything wrong with an Anthropic event sequence, as readable strings (empty when valid):
 * message_start first, blocks at indices 0, 1, 2… each opened, fed with deltas of its own kind
 * and closed before the next opens, one message_delta after the last block, message_stop last.
 * `ping` may come anywhere after message_start. Works on SDK events and raw events alike.
 */
export function sequenceProblems(events: Array<{ type: string; [k: string]: any }>): string[] {
  const problems: string[] = [];
  const evs = events.filter((e) => e.type !== 'ping');
  if (evs[0]?.type !== 'message_start') problems.push(`first event is ${evs[0]?.type}, not message_start`);
  if (evs.at(-1)?.type !== 'message_stop') problems.push(`last event is ${evs.at(-1)?.type}, not message_stop`);
  if (evs.filter((e) => e.type === 'message_start').length !== 1) problems.push('not exactly one message_start');
  if (evs.filter((e) => e.type === 'message_stop').length !== 1) problems.push('not exactly one message_stop');
  const deltas = evs.filter((e) => e.type === 'message_delta');
  if (deltas.length !== 1) problems.push(`${deltas.length} message_delta events`);
  if (evs.at(-2)?.type !== 'message_delta') problems.push('message_delta does not come right before message_stop');
  let open: { index: number; kind: string } | null = null;
  let next = 0;
  evs.forEach((e, i) => {
    switch (e.type) {
      case 'content_block_start':
        if (open) problems.push(`#${i}: block ${e.index} starts while ${open.index} is open`);
        if (e.index !== next) problems.push(`#${i}: block index ${e.index}, expected ${next}`);
        open = { index: e.index, kind: e.content_block?.type };
        next = e.index + 1;
        break;
      case 'content_block_delta':
        if (!open || open.index !== e.index) problems.push(`#${i}: delta for ${e.index} outside its block`);
        else if (!(DELTA_FOR_BLOCK[open.kind] ?? []).includes(e.delta?.type)) {
          problems.push(`#${i}: ${e.delta?.type} inside a ${open.kind} block`);
        }
        break;
      case 'content_block_stop':
        if (!open || open.index !== e.index) problems.push(`#${i}: stop for ${e.index} which is not open`);
        open = null;
        break;
      case 'message_delta':
        if (open) problems.push(`#${i}: message_delta while block ${(open as { index: number }).index} is open`);
        if (typeof e.usage?.output_tokens !== 'number')
          problems.push(`#${i}: message_delta without usage.output_tokens`);
        break;
      case 'message_start':
      case 'message_stop':
        break;
      default:
        problems.push(`#${i}: unexpected event ${e.type}`);
    }
  });
  return problems;
}

/** Raw SSE of the messages surface: also checks that every `event:` line names its payload's type. */
export function rawSequenceProblems(text: string): string[] {
  const events = readSSE(text);
  const problems = events
    .filter((e) => e.event !== e.data?.type)
    .map((e) => `event: ${e.event} carries type ${e.data?.type}`);
  return [...problems, ...sequenceProblems(events.map((e) => e.data))];
}

// ---------------------------------------------------------------------------------------------
// What a recorded answer says, read straight from the fixture.

export interface Usage {
  /** Excludes cached tokens, as Anthropic counts and as billing does. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Reference {
  text: string;
  thinking: string;
  tools: Array<{ id: string; name: string; input: unknown }>;
  usage: Usage;
  /** Anthropic stop_reason / OpenAI finish_reason of the recording, as recorded. */
  stop: string | null;
  /** The recording ends in an error event rather than an answer. */
  error?: { type: string; message: string };
}

/** An Anthropic event stream as a client should see it once assembled. */
export function anthropicStreamReference(sse: string): Reference {
  const ref: Reference = {
    text: '',
    thinking: '',
    tools: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    stop: null,
  };
  const blocks = new Map<number, { type: string; id?: string; name?: string; json: string }>();
  const takeUsage = (u: any) => {
    if (!u) return;
    if (typeof u.input_tokens === 'number') ref.usage.input = u.input_tokens;
    if (typeof u.output_tokens === 'number') ref.usage.output = u.output_tokens;
    if (typeof u.cache_read_input_tokens === 'number') ref.usage.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') ref.usage.cacheWrite = u.cache_creation_input_tokens;
  };
  for (const { data } of readSSE(sse)) {
    switch (data.type) {
      case 'message_start':
        takeUsage(data.message.usage);
        break;
      case 'content_block_start': {
        const b = data.content_block;
        blocks.set(data.index, { type: b.type, id: b.id, name: b.name, json: '' });
        if (b.type === 'text') ref.text += b.text ?? '';
        if (b.type === 'thinking') ref.thinking += b.thinking ?? '';
        break;
      }
      case 'content_block_delta': {
        const d = data.delta;
        if (d.type === 'text_delta') ref.text += d.text;
        if (d.type === 'thinking_delta') ref.thinking += d.thinking;
        if (d.type === 'input_json_delta') blocks.get(data.index)!.json += d.partial_json;
        break;
      }
      case 'message_delta':
        ref.stop = data.delta.stop_reason;
        takeUsage(data.usage);
        break;
      case 'error':
        ref.error = data.error;
        break;
    }
  }
  for (const b of blocks.values()) {
    if (b.type === 'tool_use')
      ref.tools.push({ id: b.id!, name: b.name!, input: b.json === '' ? {} : JSON.parse(b.json) });
  }
  return ref;
}

export function anthropicMessageReference(msg: any): Reference {
  const u = msg.usage ?? {};
  return {
    text: msg.content
      .filter((b: any) => b.type === 'text')
      .map((b: any) => b.text)
      .join(''),
    thinking: msg.content
      .filter((b: any) => b.type === 'thinking')
      .map((b: any) => b.thinking)
      .join(''),
    tools: msg.content
      .filter((b: any) => b.type === 'tool_use')
      .map((b: any) => ({ id: b.id, name: b.name, input: b.input })),
    usage: {
      input: u.input_tokens ?? 0,
      output: u.output_tokens ?? 0,
      cacheRead: u.cache_read_input_tokens ?? 0,
      cacheWrite: u.cache_creation_input_tokens ?? 0,
    },
    stop: msg.stop_reason,
  };
}

function openaiUsage(u: any): Usage {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input: (u?.prompt_tokens ?? 0) - cached,
    output: u?.completion_tokens ?? 0,
    cacheRead: cached,
    cacheWrite: 0,
  };
}

/** A chat-completions stream (choice 0). Refusal text counts as text: it is what the model said. */
export function openaiStreamReference(sse: string): Reference {
  const ref: Reference = {
    text: '',
    thinking: '',
    tools: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    stop: null,
  };
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const { data } of readSSE(sse)) {
    if (typeof data !== 'object') continue;
    const choice = data.choices?.find((c: any) => (c.index ?? 0) === 0);
    const d = choice?.delta;
    if (d) {
      if (typeof d.content === 'string') ref.text += d.content;
      if (typeof d.refusal === 'string') ref.text += d.refusal;
      if (typeof d.reasoning_content === 'string') ref.thinking += d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        const call = calls.get(tc.index) ?? { id: '', name: '', args: '' };
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name = tc.function.name;
        call.args += tc.function?.arguments ?? '';
        calls.set(tc.index, call);
      }
    }
    if (choice?.finish_reason) ref.stop = choice.finish_reason;
    if (data.usage && typeof data.usage === 'object') ref.usage = openaiUsage(data.usage);
  }
  ref.tools = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, c]) => ({ id: c.id, name: c.name, input: JSON.parse(c.args) }));
  return ref;
}

export function openaiCompletionReference(body: any): Reference {
  const msg = body.choices.find((c: any) => c.index === 0).message;
  return {
    text: (msg.content ?? '') + (msg.refusal ?? ''),
    thinking: msg.reasoning_content ?? '',
    tools: (msg.tool_calls ?? []).map((c: any) => ({
      id: c.id,
      name: c.function.name,
      input: JSON.parse(c.function.arguments),
    })),
    usage: openaiUsage(body.usage),
    stop: body.choices.find((c: any) => c.index === 0).finish_reason,
  };
}

/** PROTOCOLS.md "Mapping stop reasons", both ways. */
export const FINISH_FOR_STOP: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  pause_turn: 'stop',
};
export const STOP_FOR_FINISH: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

/** A precondition of the test itself (fixture content, test arithmetic): not a gateway assertion. */
export function assume(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`test precondition failed: ${what}`);
}

// ---------------------------------------------------------------------------------------------
// Money: ceil(Σ tokens × USD-per-M price × 1e9 / 1e6) nano-USD, input excluding cached tokens.

const nanoPerM = (usd: number) => BigInt(Math.round(usd * 1e9));

export function expectedCostNano(u: Usage, prices = PRICES.pricing): bigint {
  const total =
    BigInt(u.input) * nanoPerM(prices.input) +
    BigInt(u.cacheRead) * nanoPerM(prices.cache_read) +
    BigInt(u.cacheWrite) * nanoPerM(prices.cache_write) +
    BigInt(u.output) * nanoPerM(prices.output);
  return (total + 999_999n) / 1_000_000n;
}
