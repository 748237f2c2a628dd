// The chat-completions request in both directions: a client's body → IR (validated), and
// IR → a body for an upstream that speaks OpenAI chat.

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';
import type { IRContent, IRMessage, IRRequest, IRTool, IRToolChoice } from '../ir.js';
import { parseToolArguments, stringifyToolArguments } from './shared.js';
import { mergeTurns } from '../turns.js';
import { setOutputCap } from './upstream.js';

// ---------------------------------------------------------------------------------------------
// Validation. Only the fields the gateway reads are checked; everything else passes untouched
// (looseObject), because same-dialect routes forward the client's body as is. Optional fields
// accept null, as OpenAI itself does.

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;

/** A variant's single message covers both "not an object" and "unknown discriminator". */
function variantMessage(key: string, allowed: readonly string[]) {
  return (issue: v.BaseIssue<unknown>) =>
    issue.path?.at(-1)?.key === key ? `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}` : 'must be an object';
}

const str = () => v.string('must be a string');
const nonEmptyStr = () => v.pipe(str(), v.nonEmpty('must not be empty'));
const bool = () => v.boolean('must be a boolean');
const positiveInt = () =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'));
const range = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  );

const TextPart = v.looseObject({ type: v.literal('text'), text: str() });
const ImagePart = v.looseObject({
  type: v.literal('image_url'),
  image_url: v.looseObject({ url: str(), detail: v.nullish(str()) }, 'must be an object with a url'),
});
const AudioPart = v.looseObject({
  type: v.literal('input_audio'),
  input_audio: v.looseObject({ data: str(), format: str() }, 'must be an object'),
});
const FilePart = v.looseObject({ type: v.literal('file'), file: v.looseObject({}, 'must be an object') });
const RefusalPart = v.looseObject({ type: v.literal('refusal'), refusal: str() });

type Keyed<K extends string> = v.LooseObjectSchema<{ [P in K]: v.LiteralSchema<string, any> } & v.ObjectEntries, any>;

/**
 * A variant that runs only the option its discriminator names. valibot's own tries the options
 * in turn, and each one passed over costs a failed check with its issue and message text: a
 * user message paid for two, every message of every request. Anything else (no discriminator,
 * an unknown one) still goes to the full variant, so that its errors read as before.
 */
function keyedVariant<const K extends string, const O extends Keyed<K>[]>(
  key: K,
  options: O,
  message: (issue: v.BaseIssue<unknown>) => string,
) {
  const full = v.variant(key, options, message);
  const byValue = new Map<unknown, v.GenericSchema>(options.map((o) => [o.entries[key].literal, o]));
  return v.lazy((input: unknown): typeof full => {
    const option =
      input !== null && typeof input === 'object' ? byValue.get((input as Record<string, unknown>)[key]) : undefined;
    return (option ?? full) as typeof full;
  });
}

const USER_PART_TYPES = ['text', 'image_url', 'input_audio', 'file'];
const UserPart = keyedVariant(
  'type',
  [TextPart, ImagePart, AudioPart, FilePart],
  variantMessage('type', USER_PART_TYPES),
);
const AssistantPart = keyedVariant('type', [TextPart, RefusalPart], variantMessage('type', ['text', 'refusal']));
const OnlyTextPart = keyedVariant('type', [TextPart], variantMessage('type', ['text']));

/**
 * String or array of parts; lazy so that an error inside a part keeps its full path. Both
 * schemas are built once: built in the getter, each message of each request made them anew.
 */
function contentOf<T extends v.GenericSchema>(part: T, minItems: number) {
  const parts = v.pipe(v.array(part), v.minLength(minItems, 'must not be an empty array'));
  const text = v.string('must be a string or an array of content parts');
  return v.lazy((input: unknown) => (Array.isArray(input) ? parts : text));
}

const TextContent = contentOf(OnlyTextPart, 0);
const UserContent = contentOf(UserPart, 1);
const AssistantContent = contentOf(AssistantPart, 0);

const ToolCall = v.looseObject(
  {
    id: str(),
    type: v.optional(v.literal('function', "must be 'function'")),
    function: v.looseObject({ name: nonEmptyStr(), arguments: str() }, 'must be an object'),
  },
  'must be an object',
);

const SystemMessage = v.looseObject({ role: v.literal('system'), content: TextContent, name: v.nullish(str()) });
const DeveloperMessage = v.looseObject({ role: v.literal('developer'), content: TextContent, name: v.nullish(str()) });
const UserMessage = v.looseObject({ role: v.literal('user'), content: UserContent, name: v.nullish(str()) });
const AssistantMessage = v.looseObject({
  role: v.literal('assistant'),
  content: v.nullish(AssistantContent),
  reasoning_content: v.nullish(str()),
  refusal: v.nullish(str()),
  tool_calls: v.nullish(v.array(ToolCall, 'must be an array')),
  function_call: v.nullish(v.looseObject({ name: nonEmptyStr(), arguments: str() }, 'must be an object')),
});
const ToolMessage = v.looseObject({ role: v.literal('tool'), content: TextContent, tool_call_id: str() });
const FunctionMessage = v.looseObject({ role: v.literal('function'), name: nonEmptyStr(), content: v.nullish(str()) });

const Message = keyedVariant(
  'role',
  [SystemMessage, DeveloperMessage, UserMessage, AssistantMessage, ToolMessage, FunctionMessage],
  variantMessage('role', ROLES),
);

const Tool = v.looseObject(
  {
    type: v.literal('function', "must be 'function'"),
    function: v.looseObject(
      {
        name: nonEmptyStr(),
        description: v.nullish(str()),
        parameters: v.nullish(v.record(v.string(), v.unknown(), 'must be a JSON Schema object')),
      },
      'must be an object',
    ),
  },
  'must be an object',
);

const ToolChoiceMode = v.picklist(
  ['auto', 'none', 'required'],
  "must be 'auto', 'none', 'required' or a function choice",
);
const ToolChoiceFunction = v.looseObject(
  {
    type: v.literal('function', "must be 'function'"),
    function: v.looseObject({ name: nonEmptyStr() }, 'must be an object with a name'),
  },
  "must be 'auto', 'none', 'required' or a function choice",
);
const ToolChoice = v.lazy((input: unknown) => (typeof input === 'string' ? ToolChoiceMode : ToolChoiceFunction));

const StopList = v.pipe(v.array(str()), v.maxLength(4, 'must hold at most 4 sequences'));
const StopText = v.string('must be a string or an array of strings');
const Stop = v.lazy((input: unknown) => (Array.isArray(input) ? StopList : StopText));

const ChatRequest = v.looseObject({
  model: nonEmptyStr(),
  messages: v.pipe(v.array(Message, 'must be an array'), v.minLength(1, 'must contain at least one message')),
  stream: v.nullish(bool()),
  max_tokens: v.nullish(positiveInt()),
  max_completion_tokens: v.nullish(positiveInt()),
  temperature: v.nullish(range(0, 2)),
  top_p: v.nullish(range(0, 1)),
  stop: v.nullish(Stop),
  tools: v.nullish(v.array(Tool, 'must be an array')),
  tool_choice: v.nullish(ToolChoice),
  parallel_tool_calls: v.nullish(bool()),
  stream_options: v.nullish(v.looseObject({ include_usage: v.nullish(bool()) }, 'must be an object')),
  user: v.nullish(str()),
  reasoning_effort: v.nullish(str()),
});

type ChatRequestBody = v.InferOutput<typeof ChatRequest>;
type ChatMessage = v.InferOutput<typeof Message>;
type ChatTool = v.InferOutput<typeof Tool>;

/** valibot path → OpenAI's `param` spelling: `messages[2].content[0].text`. */
function paramOf(issue: v.BaseIssue<unknown>): string | undefined {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? undefined : out;
}

function validationError(issue: v.BaseIssue<unknown>): GatewayError {
  const param = paramOf(issue);
  if (param === undefined) return new GatewayError('invalid_request', 'The request body must be a JSON object.');
  // A key that is absent reaches us as an issue whose input is undefined.
  if (issue.input === undefined) {
    return new GatewayError('invalid_request', `Missing required parameter: '${param}'.`, { param });
  }
  return new GatewayError('invalid_request', `Invalid '${param}': ${issue.message} (got ${issue.received}).`, {
    param,
  });
}

// ---------------------------------------------------------------------------------------------
// Client body → IR

export function parseRequest(body: unknown): IRRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = v.safeParse(ChatRequest, body, { abortEarly: true });
  if (!result.success) throw validationError(result.issues[0]);
  const req = result.output;

  const system: string[] = [];
  const turns: IRMessage[] = [];
  req.messages.forEach((msg, i) => {
    if (msg.role !== 'system' && msg.role !== 'developer') turns.push(messageToIR(msg, i));
    // An empty prompt says nothing, and Anthropic rejects empty text blocks.
    else if (joinText(msg.content, '\n') !== '') system.push(joinText(msg.content, '\n'));
  });

  const ir: IRRequest = {
    model: req.model,
    system,
    messages: mergeTurns(turns),
    stream: req.stream === true,
    includeUsage: req.stream_options?.include_usage === true,
  };
  if (req.tools && req.tools.length > 0) ir.tools = req.tools.map(toolToIR);
  const toolChoice = toolChoiceToIR(req.tool_choice);
  if (toolChoice) ir.toolChoice = toolChoice;
  if (typeof req.parallel_tool_calls === 'boolean') ir.parallelToolCalls = req.parallel_tool_calls;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) ir.maxTokens = maxTokens;
  if (req.temperature != null) ir.temperature = req.temperature;
  if (req.top_p != null) ir.topP = req.top_p;
  if (typeof req.stop === 'string') ir.stop = [req.stop];
  else if (Array.isArray(req.stop) && req.stop.length > 0) ir.stop = req.stop;
  if (req.user != null) ir.user = req.user;
  // Levels OpenAI adds later have no thinking budget to become on Anthropic; they stay unmapped.
  const effort = req.reasoning_effort;
  if (effort === 'none' || effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high')
    ir.reasoningEffort = effort;
  return ir;
}

type TextOnly = string | Array<{ type: 'text'; text: string }>;

function joinText(content: TextOnly | null | undefined, sep: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => p.text).join(sep);
}

function messageToIR(msg: Exclude<ChatMessage, { role: 'system' | 'developer' }>, i: number): IRMessage {
  switch (msg.role) {
    case 'user':
      return { role: 'user', content: userContentToIR(msg.content, i) };
    case 'assistant':
      return { role: 'assistant', content: assistantToIR(msg) };
    case 'tool':
      return {
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: msg.tool_call_id, content: joinText(msg.content, '\n') }],
      };
    case 'function':
      // The legacy function role has no call id; the function name stands in for it on both sides
      // (see assistantToIR), which keeps call and result paired and fits Anthropic's id pattern.
      return { role: 'user', content: [{ type: 'tool_result', toolUseId: msg.name, content: msg.content ?? '' }] };
  }
}

function userContentToIR(content: v.InferOutput<typeof UserContent>, i: number): IRContent[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const out: IRContent[] = [];
  content.forEach((part, j) => {
    if (part.type === 'text') out.push({ type: 'text', text: part.text });
    else if (part.type === 'image_url')
      out.push(imageToIR(part.image_url.url, `messages[${i}].content[${j}].image_url.url`));
    // input_audio and file parts have no IR counterpart; they only survive same-dialect routes,
    // which forward the client's body unchanged.
  });
  return out;
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/s;

function imageToIR(url: string, param: string): IRContent {
  const data = DATA_URL.exec(url);
  if (data) return { type: 'image', source: { kind: 'base64', mediaType: data[1]!.toLowerCase(), data: data[3]! } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { kind: 'url', url } };
  throw new GatewayError('invalid_request', `Invalid '${param}': expected an http(s) URL or a base64 data URL.`, {
    param,
    code: 'invalid_image_url',
  });
}

function assistantToIR(msg: Extract<ChatMessage, { role: 'assistant' }>): IRContent[] {
  const out: IRContent[] = [];
  // DeepSeek-style reasoning has no signature; dialects that need one drop the block.
  if (msg.reasoning_content) out.push({ type: 'thinking', thinking: msg.reasoning_content });
  if (typeof msg.content === 'string') {
    if (msg.content !== '') out.push({ type: 'text', text: msg.content });
  } else if (Array.isArray(msg.content)) {
    for (const part of msg.content) {
      const text = part.type === 'text' ? part.text : part.refusal;
      if (text !== '') out.push({ type: 'text', text });
    }
  }
  if (msg.refusal) out.push({ type: 'text', text: msg.refusal });
  for (const call of msg.tool_calls ?? []) {
    out.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments),
    });
  }
  if (msg.function_call) {
    const fc = msg.function_call;
    out.push({ type: 'tool_use', id: fc.name, name: fc.name, input: parseToolArguments(fc.arguments) });
  }
  return out;
}

function toolToIR(tool: ChatTool): IRTool {
  const out: IRTool = {
    name: tool.function.name,
    // OpenAI allows a function without parameters; Anthropic requires an input schema.
    parameters: tool.function.parameters ?? { type: 'object', properties: {} },
  };
  if (tool.function.description != null) out.description = tool.function.description;
  return out;
}

function toolChoiceToIR(choice: ChatRequestBody['tool_choice']): IRToolChoice | undefined {
  if (choice == null) return undefined;
  if (typeof choice === 'string') return { type: choice };
  return { type: 'tool', name: choice.function.name };
}

// ---------------------------------------------------------------------------------------------
// IR → upstream body

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
