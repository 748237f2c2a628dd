// The Responses request in both directions: a client's body → IR (validated), and IR → a body
// for an upstream that speaks the Responses API.
//
// What has no IR counterpart is dropped when translating (README, "What does not translate"):
// reasoning items (their encrypted content is only good at the vendor that made it), input
// files, hosted tools, `text.format`, `truncation`, `include`. Same-dialect routes forward the
// client's body as it is.

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';
import { COMPACTION_PROMPT, compactionSummary, isCompactionTrigger, SUMMARY_HEADING } from './compaction.js';
import type { IRContent, IRMessage, IRReasoningEffort, IRRequest, IRTool, IRToolChoice } from '../ir.js';
import { parseToolArguments, stringifyToolArguments } from '../openai/shared.js';
import { mergeTurns } from '../turns.js';

const str = () => v.string('must be a string');
const nonEmptyStr = () => v.pipe(str(), v.nonEmpty('must not be empty'));
const positiveInt = () =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'));
const range = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  );

const Item = v.looseObject({ type: v.optional(str()), role: v.optional(str()) }, 'must be an object');

const Tool = v.looseObject({ type: str(), name: v.optional(str()) }, 'must be an object');

const ResponsesRequest = v.looseObject({
  model: nonEmptyStr(),
  input: v.optional(v.union([str(), v.array(Item, 'must be an array')], 'must be a string or an array of items')),
  instructions: v.nullish(str()),
  stream: v.nullish(v.boolean('must be a boolean')),
  store: v.nullish(v.boolean('must be a boolean')),
  previous_response_id: v.nullish(str()),
  max_output_tokens: v.nullish(positiveInt()),
  temperature: v.nullish(range(0, 2)),
  top_p: v.nullish(range(0, 1)),
  tools: v.nullish(v.array(Tool, 'must be an array')),
  tool_choice: v.nullish(v.union([str(), v.looseObject({ type: str() })], 'must be a string or an object')),
  parallel_tool_calls: v.nullish(v.boolean('must be a boolean')),
  reasoning: v.nullish(v.looseObject({ effort: v.nullish(str()), summary: v.nullish(str()) }, 'must be an object')),
  user: v.nullish(str()),
});

function paramOf(issue: v.BaseIssue<unknown>): string | undefined {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = item.key;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? undefined : out;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid '${param}': ${message}`, { param });
}

/**
 * The name a tool of a `namespace` group goes by in the IR and upstream: vendors' tool names
 * allow neither dots nor slashes, so the group and the tool are joined by a double underscore.
 */
export const NAMESPACE_JOIN = '__';

/** What a freeform (custom) tool becomes where tools take JSON: one string argument. */
export const FREEFORM_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The raw text input of the tool.' } },
  required: ['input'],
};

const EFFORTS: Record<string, IRReasoningEffort> = {
  none: 'none',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

export function parseRequest(body: unknown): IRRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = v.safeParse(ResponsesRequest, body, { abortEarly: true });
  if (!result.success) {
    const issue = result.issues[0];
    const param = paramOf(issue);
    if (param === undefined) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
    if (issue.input === undefined)
      throw new GatewayError('invalid_request', `Missing required parameter: '${param}'.`, { param });
    throw invalid(param, `${issue.message} (got ${issue.received}).`);
  }
  const req = result.output;
  const system: string[] = [];
  if (typeof req.instructions === 'string' && req.instructions !== '') system.push(req.instructions);
  const turns: IRMessage[] = [];
  const input = req.input ?? [];
  const declared = (req.tools ?? []).flatMap((t, i) => toolsToIR(t as Record<string, unknown>, `tools[${i}]`));
  let compaction = false;
  if (typeof input === 'string') turns.push({ role: 'user', content: [{ type: 'text', text: input }] });
  else {
    input.forEach((item, i) => {
      const it = item as Record<string, unknown>;
      // Codex, on models it knows, declares its tools in an input item rather than in `tools`.
      if (it.type === 'additional_tools' && Array.isArray(it.tools))
        declared.push(
          ...it.tools.flatMap((t, j) => toolsToIR(t as Record<string, unknown>, `input[${i}].tools[${j}]`)),
        );
      else if (isCompactionTrigger(it)) compaction = true;
      else itemToIR(it, i, system, turns);
    });
  }
  // Asked to compact: the model is asked for the summary the answer's compaction item carries.
  if (compaction) turns.push({ role: 'user', content: [{ type: 'text', text: COMPACTION_PROMPT }] });

  const ir: IRRequest = {
    model: req.model,
    system,
    messages: mergeTurns(turns),
    stream: req.stream === true,
    includeUsage: true,
  };
  const tools = declared;
  if (tools.length > 0) ir.tools = tools;
  const choice = toolChoiceToIR(req.tool_choice);
  if (choice) ir.toolChoice = choice;
  if (compaction) {
    ir.compaction = true;
    // The tools stay declared (the prompt's cache holds them), and none may be called.
    if (tools.length > 0) ir.toolChoice = { type: 'none' };
  }
  if (typeof req.parallel_tool_calls === 'boolean') ir.parallelToolCalls = req.parallel_tool_calls;
  if (req.max_output_tokens != null) ir.maxTokens = req.max_output_tokens;
  if (req.temperature != null) ir.temperature = req.temperature;
  if (req.top_p != null) ir.topP = req.top_p;
  if (req.user != null) ir.user = req.user;
  const effort = req.reasoning?.effort;
  if (typeof effort === 'string' && EFFORTS[effort]) ir.reasoningEffort = EFFORTS[effort];
  return ir;
}

function textOf(content: unknown, types: readonly string[]): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: any) => (types.includes(p?.type) && typeof p.text === 'string' ? p.text : '')).join('');
}

function itemToIR(item: Record<string, unknown>, i: number, system: string[], turns: IRMessage[]): void {
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = item.role;
      if (role === 'system' || role === 'developer') {
        const text = textOf(item.content, ['input_text', 'text']);
        if (text === '') return;
        // Instructions before the conversation are the system prompt; later ones keep their place.
        if (turns.length === 0) system.push(text);
        else turns.push({ role: 'system', content: [{ type: 'text', text }] });
        return;
      }
      if (role === 'user') turns.push({ role: 'user', content: userContent(item.content, i) });
      else if (role === 'assistant') {
        const text = textOf(item.content, ['output_text', 'refusal', 'text']);
        if (text !== '') turns.push({ role: 'assistant', content: [{ type: 'text', text }] });
      } else throw invalid(`input[${i}].role`, "must be one of 'user', 'assistant', 'system', 'developer'.");
      return;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const callId = item.call_id;
      const name = item.name;
      if (typeof callId !== 'string' || callId === '')
        throw invalid(`input[${i}].call_id`, 'must be a non-empty string.');
      if (typeof name !== 'string' || name === '') throw invalid(`input[${i}].name`, 'must be a non-empty string.');
      const fullName =
        typeof item.namespace === 'string' && item.namespace !== ''
          ? `${item.namespace}${NAMESPACE_JOIN}${name}`
          : name;
      const input =
        type === 'custom_tool_call'
          ? { input: typeof item.input === 'string' ? item.input : '' }
          : parseToolArguments(typeof item.arguments === 'string' ? item.arguments : '');
      turns.push({ role: 'assistant', content: [{ type: 'tool_use', id: callId, name: fullName, input }] });
      return;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const callId = item.call_id;
      if (typeof callId !== 'string' || callId === '')
        throw invalid(`input[${i}].call_id`, 'must be a non-empty string.');
      const output =
        typeof item.output === 'string' ? item.output : textOf(item.output, ['input_text', 'output_text', 'text']);
      turns.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: callId, content: output }] });
      return;
    }
    case 'compaction':
    case 'compaction_summary': {
      // The gateway's own compaction is its summary again; a vendor's is its encrypted state.
      const summary = compactionSummary(item);
      if (summary !== undefined)
        turns.push({ role: 'user', content: [{ type: 'text', text: `${SUMMARY_HEADING}\n\n${summary}` }] });
      return;
    }
    // Reasoning items carry the vendor's own encrypted state; hosted tools' items run at the
    // vendor. Neither can be carried to another dialect.
    default:
      return;
  }
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/s;

function userContent(content: unknown, i: number): IRContent[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(`input[${i}].content`, 'must be a string or an array of content parts.');
  const out: IRContent[] = [];
  content.forEach((part: any, j: number) => {
    if ((part?.type === 'input_text' || part?.type === 'text') && typeof part.text === 'string')
      out.push({ type: 'text', text: part.text });
    else if (part?.type === 'input_image' && typeof part.image_url === 'string') {
      const data = DATA_URL.exec(part.image_url);
      if (data)
        out.push({ type: 'image', source: { kind: 'base64', mediaType: data[1]!.toLowerCase(), data: data[3]! } });
      else if (/^https?:\/\//i.test(part.image_url))
        out.push({ type: 'image', source: { kind: 'url', url: part.image_url } });
      else throw invalid(`input[${i}].content[${j}].image_url`, 'expected an http(s) URL or a base64 data URL.');
    }
    // input_file and image file ids have no IR counterpart: only a Responses upstream reads them.
  });
  return out;
}

function toolsToIR(tool: Record<string, unknown>, param: string): IRTool[] {
  switch (tool.type) {
    case 'function': {
      if (typeof tool.name !== 'string' || tool.name === '')
        throw invalid(`${param}.name`, 'must be a non-empty string.');
      const out: IRTool = {
        name: tool.name,
        parameters: (tool.parameters as Record<string, unknown> | null) ?? { type: 'object', properties: {} },
      };
      if (typeof tool.description === 'string') out.description = tool.description;
      return [out];
    }
    case 'custom': {
      if (typeof tool.name !== 'string' || tool.name === '')
        throw invalid(`${param}.name`, 'must be a non-empty string.');
      const out: IRTool = { name: tool.name, parameters: FREEFORM_PARAMETERS, freeform: true };
      const grammar = (tool.format as { definition?: unknown } | undefined)?.definition;
      // A model without freeform tools still learns what the text must look like.
      const parts = [
        typeof tool.description === 'string' ? tool.description : '',
        typeof grammar === 'string' ? `The input must follow this grammar:\n${grammar}` : '',
      ].filter((s) => s !== '');
      if (parts.length > 0) out.description = parts.join('\n\n');
      return [out];
    }
    case 'namespace': {
      const ns = tool.name;
      if (typeof ns !== 'string' || ns === '') throw invalid(`${param}.name`, 'must be a non-empty string.');
      const inner = Array.isArray(tool.tools) ? (tool.tools as Record<string, unknown>[]) : [];
      return inner
        .flatMap((t, j) => toolsToIR(t, `${param}.tools[${j}]`))
        .map((t) => ({ ...t, name: `${ns}${NAMESPACE_JOIN}${t.name}`, namespace: ns }));
    }
    // Hosted tools (web_search…) are the vendor's: priced or refused by the terms, dropped here.
    default:
      return [];
  }
}

function toolChoiceToIR(choice: unknown): IRToolChoice | undefined {
  if (choice == null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { type: choice };
  if (typeof choice === 'object') {
    const c = choice as { type?: unknown; name?: unknown; mode?: unknown };
    if ((c.type === 'function' || c.type === 'custom') && typeof c.name === 'string')
      return { type: 'tool', name: c.name };
    if (c.type === 'allowed_tools') return { type: c.mode === 'required' ? 'required' : 'auto' };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// IR → upstream body

export function buildRequest(ir: IRRequest, upstreamModel: string): Record<string, unknown> {
  const input: Record<string, unknown>[] = [];
  for (const msg of ir.messages) {
    for (const c of msg.content) {
      if (c.type === 'text') {
        const role = msg.role;
        input.push(
          role === 'assistant'
            ? { type: 'message', role, content: [{ type: 'output_text', text: c.text }] }
            : {
                type: 'message',
                role: role === 'system' ? 'developer' : 'user',
                content: [{ type: 'input_text', text: c.text }],
              },
        );
      } else if (c.type === 'image') {
        const url = c.source.kind === 'base64' ? `data:${c.source.mediaType};base64,${c.source.data}` : c.source.url;
        input.push({ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: url }] });
      } else if (c.type === 'tool_use') {
        input.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: stringifyToolArguments(c.input) });
      } else if (c.type === 'tool_result') {
        const output =
          typeof c.content === 'string'
            ? c.content
            : c.content.flatMap((x) => (x.type === 'text' ? [x.text] : [])).join('\n');
        input.push({ type: 'function_call_output', call_id: c.toolUseId, output });
      }
      // Thinking from another vendor cannot be handed to this one.
    }
  }
  const body: Record<string, unknown> = { model: upstreamModel, input, stream: ir.stream, store: false };
  if (ir.system.length > 0) body.instructions = ir.system.join('\n\n');
  if (ir.tools && ir.tools.length > 0) {
    body.tools = ir.tools.map((t) => ({
      type: 'function',
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters,
      strict: false,
    }));
    if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  }
  const hasTools = ir.tools !== undefined && ir.tools.length > 0;
  if (ir.toolChoice && (hasTools || ir.toolChoice.type === 'none')) {
    body.tool_choice =
      ir.toolChoice.type === 'tool' ? { type: 'function', name: ir.toolChoice.name } : ir.toolChoice.type;
  }
  if (ir.maxTokens !== undefined) body.max_output_tokens = ir.maxTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.user !== undefined) body.user = ir.user;
  if (ir.reasoningEffort !== undefined) body.reasoning = { effort: ir.reasoningEffort };
  return body;
}
