// The chat-completions request from a client: its body → IR, validated (./request-schema.ts).
// The other way, IR → a body for an upstream that speaks OpenAI chat, is ./build.ts.

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';
import type { IRContent, IRMessage, IRRequest, IRTool, IRToolChoice } from '../ir.js';
import { parseToolArguments } from './shared.js';
import { mergeTurns } from '../turns.js';
import {
  ChatRequest,
  validationError,
  type ChatMessage,
  type ChatRequestBody,
  type ChatTool,
  type UserContent,
} from './request-schema.js';

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
