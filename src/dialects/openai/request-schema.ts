// The chat-completions request's validation, for ./request.ts. Only the fields the gateway
// reads are checked; everything else passes untouched (looseObject), because same-dialect routes
// forward the client's body as is. Optional fields accept null, as OpenAI itself does.

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';

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
export const UserContent = contentOf(UserPart, 1);
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

export const ChatRequest = v.looseObject({
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

export type ChatRequestBody = v.InferOutput<typeof ChatRequest>;
export type ChatMessage = v.InferOutput<typeof Message>;
export type ChatTool = v.InferOutput<typeof Tool>;

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

export function validationError(issue: v.BaseIssue<unknown>): GatewayError {
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
