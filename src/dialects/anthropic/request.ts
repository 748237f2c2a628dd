// Requests: a /v1/messages body → IR (client side) and IR → a Messages body (upstream side).

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';
import type { IRContent, IRMessage, IRReasoningEffort, IRRequest, IRTool, IRToolChoice } from '../ir.js';
import { blockFromWire, blockToWire } from './blocks.js';

type Wire = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Client side

/** Content and tools are only checked for shape here; each entry is then checked by its type. */
const Entry = v.looseObject({});

// Lenient on purpose: a same-dialect route forwards the body as sent, so only what the gateway
// reads itself is checked (the model, the cap it reserves for, the parts it counts and maps);
// new roles, block types, tool choices and top-level fields reach the vendor, which judges them.
const RequestSchema = v.looseObject({
  model: v.pipe(v.string(), v.minLength(1, 'Input should be a non-empty string')),
  max_tokens: v.pipe(v.number(), v.integer(), v.minValue(1)),
  messages: v.pipe(
    v.array(v.looseObject({ role: v.string(), content: v.unknown() })),
    v.minLength(1, 'at least one message is required'),
  ),
  system: v.optional(v.unknown()),
  tools: v.nullish(v.array(Entry)),
  tool_choice: v.nullish(
    v.looseObject({ type: v.string(), name: v.nullish(v.string()), disable_parallel_tool_use: v.nullish(v.boolean()) }),
  ),
  stop_sequences: v.nullish(v.array(v.string())),
  temperature: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  top_p: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  // Accepted for validation only: the IR has no top_k, and OpenAI upstreams no counterpart.
  top_k: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(0))),
  stream: v.nullish(v.boolean()),
  // Any type is let through so that new modes keep working on Anthropic upstreams.
  thinking: v.nullish(v.looseObject({ type: v.string() })),
  output_config: v.nullish(v.looseObject({ effort: v.nullish(v.string()) })),
  metadata: v.nullish(v.looseObject({ user_id: v.nullish(v.string()) })),
});

const NamedChoice = v.looseObject({ name: v.pipe(v.string(), v.minLength(1)) });

const EnabledThinking = v.looseObject({ budget_tokens: v.pipe(v.number(), v.integer(), v.minValue(1024)) });

const CustomTool = v.looseObject({
  name: v.pipe(v.string(), v.minLength(1)),
  description: v.nullish(v.string()),
  input_schema: v.looseObject({}),
});

const TypedBlock = v.looseObject({ type: v.string() });
const ImageBlock = v.looseObject({ source: v.looseObject({ type: v.string() }) });
const Base64Source = v.looseObject({ media_type: v.string(), data: v.string() });
const UrlSource = v.looseObject({ url: v.string() });

/** Schemas of the block types the IR carries; other types are dropped (see blockFromWire). */
const BLOCK_SCHEMAS: Record<string, v.GenericSchema> = {
  text: v.looseObject({ text: v.string() }),
  image: ImageBlock,
  tool_use: v.looseObject({
    id: v.string(),
    name: v.string(),
    input: v.record(v.string(), v.unknown()),
  }),
  tool_result: v.looseObject({
    tool_use_id: v.string(),
    content: v.optional(v.unknown()),
    is_error: v.nullish(v.boolean()),
  }),
  thinking: v.looseObject({ thinking: v.string(), signature: v.string() }),
  redacted_thinking: v.looseObject({ data: v.string() }),
};

function issueText(issue: v.BaseIssue<unknown>): string {
  // A missing key reads better the way Anthropic words it.
  if (issue.kind === 'schema' && issue.received === 'undefined') return 'Field required';
  return issue.message;
}

function invalid(path: string, message: string): GatewayError {
  return new GatewayError(
    'invalid_request',
    path === '' ? message : `${path}: ${message}`,
    path === '' ? {} : { param: path },
  );
}

function join(base: string, sub: string | null | undefined): string {
  if (!sub) return base;
  return base === '' ? sub : `${base}.${sub}`;
}

function check<S extends v.GenericSchema>(schema: S, value: unknown, path: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  const issue = result.issues[0];
  throw invalid(join(path, v.getDotPath(issue)), issueText(issue));
}

function isObject(x: unknown): x is Wire {
  return x !== null && typeof x === 'object' && !Array.isArray(x);
}

/** Validates one block of a known type; returns its IR form, or null for an unknown type. */
function parseBlock(block: unknown, path: string, inToolResult = false): IRContent | null {
  const { type } = check(TypedBlock, block, path);
  const schema = BLOCK_SCHEMAS[type];
  if (!schema) return null;
  if (inToolResult && type !== 'text' && type !== 'image') return null;
  check(schema, block, path);
  const b = block as Wire;
  if (type === 'image') {
    const source = b.source as Wire;
    if (source.type === 'base64') check(Base64Source, source, `${path}.source`);
    else if (source.type === 'url') check(UrlSource, source, `${path}.source`);
  }
  if (type === 'tool_result') {
    const content = b.content;
    if (content !== undefined && content !== null && typeof content !== 'string') {
      if (!Array.isArray(content))
        throw invalid(`${path}.content`, 'Input should be a string or an array of content blocks');
      content.forEach((inner, k) => parseBlock(inner, `${path}.content.${k}`, true));
    }
  }
  return blockFromWire(block);
}

function parseContent(content: unknown, path: string): IRContent[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (content === undefined) throw invalid(path, 'Field required');
  if (!Array.isArray(content)) throw invalid(path, 'Input should be a string or an array of content blocks');
  const out: IRContent[] = [];
  content.forEach((block, j) => {
    const ir = parseBlock(block, `${path}.${j}`);
    if (ir) out.push(ir);
  });
  return out;
}

/** The system prompt's text; blocks of other types are the vendor's business and stay out of the IR. */
function parseSystem(system: unknown): string[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return system === '' ? [] : [system];
  if (!Array.isArray(system)) throw invalid('system', 'Input should be a string or an array of text blocks');
  return textOf(parseContent(system, 'system'));
}

function textOf(blocks: IRContent[]): string[] {
  return blocks.flatMap((b) => (b.type === 'text' && b.text !== '' ? [b.text] : []));
}

/**
 * user and assistant turns map as they are; a system message in the middle of the conversation
 * keeps its text and its place; a role the gateway does not know has no counterpart in another
 * dialect and only reaches an Anthropic upstream.
 */
function parseMessage(m: { role: string; content: unknown }, path: string): IRMessage | null {
  if (m.role === 'user' || m.role === 'assistant')
    return { role: m.role, content: parseContent(m.content, `${path}.content`) };
  if (m.role !== 'system') return null;
  return {
    role: 'system',
    content: textOf(parseContent(m.content, `${path}.content`)).map((text) => ({ type: 'text', text })),
  };
}

/** OpenAI's levels for Anthropic's: `max` has no level above `high` there. */
const EFFORTS: Record<string, IRReasoningEffort> = { low: 'low', medium: 'medium', high: 'high', max: 'high' };

/**
 * How hard the client wants the model to think. An explicit effort wins; a thinking budget is
 * read as a level (Anthropic's own guidance: a few thousand tokens for light work, tens of
 * thousands for hard problems); adaptive thinking without an effort runs at Anthropic's
 * default effort, high.
 */
function reasoningEffort(
  effort: string | null | undefined,
  thinking: { type: string } | null | undefined,
  budget: number | undefined,
): IRReasoningEffort | undefined {
  if (typeof effort === 'string' && EFFORTS[effort]) return EFFORTS[effort];
  if (budget !== undefined) return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
  if (thinking?.type === 'adaptive') return 'high';
  return undefined;
}

/**
 * Tools without a `type` (or `custom`) are client tools and map to the IR. Typed ones are
 * Anthropic's server and built-in tools (web_search_…, bash_…, text_editor_…): they have no
 * counterpart elsewhere, so they are dropped from the IR instead of failing the request.
 */
function parseTools(tools: Wire[]): IRTool[] {
  const out: IRTool[] = [];
  tools.forEach((tool, i) => {
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') return;
    const t = check(CustomTool, tool, `tools.${i}`);
    const ir: IRTool = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === 'string') ir.description = t.description;
    out.push(ir);
  });
  return out;
}

export function parseRequest(body: unknown): IRRequest {
  if (!isObject(body)) throw invalid('', 'Request body must be a JSON object');
  const req = check(RequestSchema, body, '');

  const messages = req.messages
    .map((m, i) => parseMessage(m, `messages.${i}`))
    .filter((m): m is IRMessage => m !== null);

  const ir: IRRequest = {
    model: req.model,
    system: parseSystem(req.system),
    messages,
    maxTokens: req.max_tokens,
    stream: req.stream === true,
    includeUsage: false,
  };

  if (req.tools) ir.tools = parseTools(req.tools);

  const choice = req.tool_choice;
  if (choice) {
    let tc: IRToolChoice | undefined;
    if (choice.type === 'any') tc = { type: 'required' };
    else if (choice.type === 'tool') tc = { type: 'tool', name: check(NamedChoice, choice, 'tool_choice').name };
    else if (choice.type === 'auto' || choice.type === 'none') tc = { type: choice.type };
    if (tc) ir.toolChoice = tc;
    if (choice.disable_parallel_tool_use === true) ir.parallelToolCalls = false;
  }

  if (req.stop_sequences && req.stop_sequences.length > 0) ir.stop = req.stop_sequences;
  if (typeof req.temperature === 'number') ir.temperature = req.temperature;
  if (typeof req.top_p === 'number') ir.topP = req.top_p;

  // Only an explicit budget maps to a budget; adaptive thinking leaves it to the upstream.
  if (req.thinking?.type === 'enabled') {
    ir.thinking = { budgetTokens: check(EnabledThinking, req.thinking, 'thinking').budget_tokens };
  }
  const effort = reasoningEffort(req.output_config?.effort, req.thinking, ir.thinking?.budgetTokens);
  if (effort) ir.reasoningEffort = effort;

  const userId = req.metadata?.user_id;
  if (typeof userId === 'string' && userId !== '') ir.user = userId;
  return ir;
}

// ---------------------------------------------------------------------------------------------
// Upstream side

const DEFAULT_MAX_TOKENS = 4096;
const MIN_THINKING_BUDGET = 1024;
/** Stands in for the user turn Anthropic wants first when a conversation opens with the assistant. */
const OPENING_USER_TEXT = '.';

/**
 * A reasoning effort as a thinking budget (OpenAI client → Anthropic upstream). Thinking tokens
 * are output tokens inside max_tokens, so the budget never raises what was reserved for.
 */
const THINKING_BUDGETS: Record<IRReasoningEffort, number | undefined> = {
  none: undefined,
  minimal: undefined,
  low: 2048,
  medium: 8192,
  high: 24576,
};

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * IR messages → Anthropic's turns: blocks Anthropic would reject are dropped, empty turns
 * disappear, consecutive turns of one role merge, tool results lead their user turn, and the
 * conversation opens with a user turn.
 */
function buildMessages(messages: IRMessage[]): { role: 'user' | 'assistant'; content: Wire[] }[] {
  const turns: { role: 'user' | 'assistant'; content: Wire[] }[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const content = m.content.map((b) => blockToWire(b, true)).filter((b): b is Wire => b !== null);
    if (content.length === 0) continue;
    const last = turns.at(-1);
    if (last && last.role === m.role) last.content.push(...content);
    else turns.push({ role: m.role, content });
  }
  for (const turn of turns) {
    // Anthropic requires each tool_result to come before any other block in its user turn.
    if (turn.role === 'user') {
      turn.content = [
        ...turn.content.filter((b) => b.type === 'tool_result'),
        ...turn.content.filter((b) => b.type !== 'tool_result'),
      ];
    }
  }
  // A final assistant turn is a prefill, and Anthropic rejects one that ends in whitespace.
  const last = turns.at(-1);
  if (last && last.role === 'assistant') {
    const tail = last.content.at(-1);
    if (tail && tail.type === 'text' && typeof tail.text === 'string') {
      const text = tail.text.trimEnd();
      if (text === '') last.content.pop();
      else tail.text = text;
      if (last.content.length === 0) turns.pop();
    }
  }
  if (turns.length > 0 && turns[0]!.role === 'assistant') {
    turns.unshift({ role: 'user', content: [{ type: 'text', text: OPENING_USER_TEXT }] });
  }
  return turns;
}

/** Names of tools the conversation already used. */
function usedToolNames(messages: IRMessage[]): string[] {
  const names = new Set<string>();
  for (const m of messages) for (const b of m.content) if (b.type === 'tool_use') names.add(b.name);
  return [...names];
}

function wireTool(t: IRTool): Wire {
  // Anthropic requires an object schema; OpenAI functions may omit `parameters` altogether.
  const schema =
    typeof t.parameters?.type === 'string' ? t.parameters : { type: 'object', properties: {}, ...t.parameters };
  const out: Wire = { name: t.name };
  if (t.description !== undefined) out.description = t.description;
  out.input_schema = schema;
  return out;
}

export function buildRequest(ir: IRRequest, upstreamModel: string): Record<string, unknown> {
  const maxTokens = ir.maxTokens && ir.maxTokens > 0 ? ir.maxTokens : DEFAULT_MAX_TOKENS;
  const messages = buildMessages(ir.messages);
  const body: Record<string, unknown> = { model: upstreamModel, max_tokens: maxTokens, messages };

  // Mid-conversation instructions join the system prompt: not every Anthropic model or account
  // takes a system message among the turns.
  const inline = ir.messages
    .filter((m) => m.role === 'system')
    .flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])));
  const system = [...ir.system, ...inline].filter((s) => s !== '');
  if (system.length > 0) body.system = system.join('\n\n');

  let tools = (ir.tools ?? []).map(wireTool);
  let toolChoice: Wire | undefined;
  if (tools.length > 0) {
    const noParallel = ir.parallelToolCalls === false;
    const tc = ir.toolChoice;
    if (tc?.type === 'none') toolChoice = { type: 'none' };
    else if (tc?.type === 'required') toolChoice = { type: 'any' };
    else if (tc?.type === 'tool') toolChoice = { type: 'tool', name: tc.name };
    else if (tc?.type === 'auto' || noParallel) toolChoice = { type: 'auto' };
    if (toolChoice && noParallel && toolChoice.type !== 'none') toolChoice.disable_parallel_tool_use = true;
  } else {
    // Anthropic refuses tool_use / tool_result blocks in a request that defines no tools, which
    // is how OpenAI clients often replay a history. Declare the used names, and forbid calling them.
    const used = usedToolNames(ir.messages);
    if (used.length > 0) {
      tools = used.map((name) => ({ name, input_schema: { type: 'object', properties: {} } }));
      toolChoice = { type: 'none' };
    }
  }
  if (tools.length > 0) body.tools = tools;
  if (toolChoice) body.tool_choice = toolChoice;

  if (ir.stop && ir.stop.length > 0) body.stop_sequences = ir.stop;

  // Thinking constraints on Anthropic: budget ≥ 1024 and below max_tokens, no forced tool use,
  // temperature 1 only, top_p ≥ 0.95. Rather than fail, the request keeps what the client
  // most likely depends on: forced tools over thinking, thinking over sampling tweaks.
  let thinking = false;
  const wanted = ir.thinking?.budgetTokens ?? (ir.reasoningEffort ? THINKING_BUDGETS[ir.reasoningEffort] : undefined);
  if (wanted && toolChoice?.type !== 'any' && toolChoice?.type !== 'tool') {
    const budget = Math.min(Math.floor(wanted), maxTokens - 1);
    if (budget >= MIN_THINKING_BUDGET) {
      body.thinking = { type: 'enabled', budget_tokens: budget };
      thinking = true;
    }
  }
  if (typeof ir.temperature === 'number' && !thinking) body.temperature = clamp(ir.temperature, 0, 1);
  if (typeof ir.topP === 'number' && (!thinking || ir.topP >= 0.95)) body.top_p = clamp(ir.topP, 0, 1);

  if (ir.stream) body.stream = true;
  if (ir.user) body.metadata = { user_id: ir.user };
  return body;
}
