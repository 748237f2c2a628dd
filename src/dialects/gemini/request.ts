// A Gemini generateContent body → IR (validated). The model and streaming come from the URL
// (`models/{model}:streamGenerateContent`), not the body. Function calls have no ids before
// Gemini 3: a call gets its `id` when it has one, else one of ours, and a functionResponse is
// matched by its `id`, else by name and order to the calls of the turn before it.
//
// What has no IR counterpart is dropped when translating: topK, safetySettings, response
// schemas, includeThoughts, executable code parts. `cachedContent` cannot be dropped (the
// cache holds the prompt), so it is served only by a Gemini upstream (`sameDialectOnly`).

import * as v from 'valibot';
import { GatewayError } from '../../errors.js';
import { randomBase62 } from '../../wire.js';
import type { SurfaceCall } from '../dialect.js';
import type { IRContent, IRMessage, IRReasoningEffort, IRRequest, IRTool, IRToolChoice } from '../ir.js';
import { isRecord } from '../openai/shared.js';
import { mergeTurns } from '../turns.js';
import { field, record } from './fields.js';
import { openApiToJsonSchema } from './schema.js';

const str = () => v.string('must be a string');
const int = (min: number) =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`));
const range = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  );

const Part = v.looseObject({}, 'must be an object');
const Content = v.looseObject(
  { role: v.nullish(str()), parts: v.array(Part, 'must be an array of parts') },
  'must be an object with parts',
);

const GenerationConfig = v.object({
  maxOutputTokens: v.nullish(int(1)),
  temperature: v.nullish(range(0, 2)),
  topP: v.nullish(range(0, 1)),
  topK: v.nullish(v.number('must be a number')),
  stopSequences: v.nullish(v.array(str(), 'must be an array of strings')),
  candidateCount: v.nullish(int(1)),
  thinkingConfig: v.nullish(v.looseObject({}, 'must be an object')),
});
const GENERATION_FIELDS = Object.keys(GenerationConfig.entries);

const GeminiRequest = v.object({
  contents: v.array(Content, 'must be an array of contents'),
  systemInstruction: v.nullish(v.union([str(), Content], 'must be a content object')),
  tools: v.nullish(v.array(v.looseObject({}, 'must be an object'), 'must be an array')),
  toolConfig: v.nullish(v.looseObject({}, 'must be an object')),
  cachedContent: v.nullish(str()),
});
const REQUEST_FIELDS = Object.keys(GeminiRequest.entries);

export const invalid = (param: string, message: string) =>
  new GatewayError('invalid_request', `Invalid value at '${param}': ${message}`, { param });

function paramOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? [])
    .map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`))
    .join('')
    .replace(/^\./, '');
}

/** The fields the gateway reads, camelCase whichever way the client spelled them. */
function normalized(body: Record<string, unknown>) {
  const top: Record<string, unknown> = {};
  for (const k of REQUEST_FIELDS) if (field(body, k) != null) top[k] = field(body, k);
  const gc = record(field(body, 'generationConfig'));
  const gen: Record<string, unknown> = {};
  if (gc) for (const k of GENERATION_FIELDS) if (field(gc, k) != null) gen[k] = field(gc, k);
  if (field(body, 'generationConfig') != null && !gc) throw invalid('generationConfig', 'must be an object.');
  return { top, gen };
}

function check<S extends v.GenericSchema>(schema: S, value: unknown, prefix: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value, { abortEarly: true });
  if (r.success) return r.output;
  const issue = r.issues[0];
  const param = [prefix, paramOf(issue)]
    .filter((p) => p !== '')
    .join('.')
    .replace(/\.\[/g, '[');
  if (issue.input === undefined)
    throw new GatewayError('invalid_request', `Missing required field: '${param}'.`, { param });
  throw invalid(param, `${issue.message} (got ${issue.received}).`);
}

/** A countTokens body may wrap a whole generateContent request. */
export function requestBody(body: unknown, call: SurfaceCall | undefined): Record<string, unknown> {
  if (!isRecord(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const wrapped = call?.method === 'count_tokens' ? record(field(body, 'generateContentRequest')) : undefined;
  return wrapped ?? body;
}

const LEVELS: Record<string, IRReasoningEffort> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' };

export function parseRequest(raw: unknown, call?: SurfaceCall): IRRequest {
  const body = requestBody(raw, call);
  const { top, gen } = normalized(body);
  const req = check(GeminiRequest, top, '');
  const cfg = check(GenerationConfig, gen, 'generationConfig');
  const model = call?.model ?? (typeof body.model === 'string' ? body.model.replace(/^models\//, '') : '');
  if (model === '')
    throw new GatewayError(
      'invalid_request',
      'The model must be named in the URL: /v1beta/models/{model}:generateContent.',
      { param: 'model' },
    );

  const system: string[] = [];
  const si = req.systemInstruction;
  if (typeof si === 'string') {
    if (si !== '') system.push(si);
  } else if (si) {
    const text = si.parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
    if (text !== '') system.push(text);
  }

  const turns = contentsToIR(req.contents);
  const ir: IRRequest = {
    model,
    system,
    messages: joinThoughts(mergeTurns(turns)),
    stream: call?.stream ?? false,
    includeUsage: true,
  };
  const tools = (req.tools ?? []).flatMap((t, i) => toolsToIR(t, i));
  if (tools.length > 0) ir.tools = tools;
  const choice = toolChoiceToIR(record(field(req.toolConfig, 'functionCallingConfig')));
  if (choice) ir.toolChoice = choice;
  if (cfg.maxOutputTokens != null) ir.maxTokens = cfg.maxOutputTokens;
  if (cfg.temperature != null) ir.temperature = cfg.temperature;
  if (cfg.topP != null) ir.topP = cfg.topP;
  if (cfg.stopSequences && cfg.stopSequences.length > 0) ir.stop = cfg.stopSequences;
  const thinking = cfg.thinkingConfig;
  if (thinking) {
    const budget = field(thinking, 'thinkingBudget');
    const level = field(thinking, 'thinkingLevel');
    if (typeof budget === 'number' && budget > 0) ir.thinking = { budgetTokens: Math.floor(budget) };
    if (budget === 0) ir.reasoningEffort = 'none';
    if (typeof level === 'string' && LEVELS[level.toLowerCase()]) ir.reasoningEffort = LEVELS[level.toLowerCase()];
  }
  if (req.cachedContent)
    ir.sameDialectOnly = {
      param: 'cachedContent',
      message:
        'cachedContent names a cache kept by Gemini itself: it is served only by a Gemini upstream, and this model has none.',
    };
  return ir;
}

const DATA_URL_IMAGE = /^image\//i;

function contentsToIR(contents: { role?: string | null; parts: Record<string, unknown>[] }[]): IRMessage[] {
  const turns: IRMessage[] = [];
  // Calls without an id wait here, per name, for the response that answers them.
  const pending = new Map<string, string[]>();
  const ids = new Set<string>();
  contents.forEach((c, i) => {
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function')
      throw invalid(`contents[${i}].role`, "must be 'user' or 'model'.");
    const out: IRContent[] = [];
    c.parts.forEach((part, j) => {
      const at = `contents[${i}].parts[${j}]`;
      const sig = field(part, 'thoughtSignature');
      const signature = typeof sig === 'string' && sig !== '' ? sig : undefined;
      const fc = record(field(part, 'functionCall'));
      const fr = record(field(part, 'functionResponse'));
      const inline = record(field(part, 'inlineData'));
      const file = record(field(part, 'fileData'));
      if (typeof part.text === 'string') {
        if (part.thought === true) {
          if (role === 'model')
            out.push(
              signature
                ? { type: 'thinking', thinking: part.text, signature }
                : { type: 'thinking', thinking: part.text },
            );
        } else if (part.text !== '') out.push({ type: 'text', text: part.text });
      } else if (fc) {
        const name = fc.name;
        if (typeof name !== 'string' || name === '')
          throw invalid(`${at}.functionCall.name`, 'must be a non-empty string.');
        const id = typeof fc.id === 'string' && fc.id !== '' ? fc.id : `call_${randomBase62(24)}`;
        if (typeof fc.id !== 'string' || fc.id === '') pending.set(name, [...(pending.get(name) ?? []), id]);
        else ids.add(id);
        const input = isRecord(fc.args) ? fc.args : {};
        out.push(signature ? { type: 'tool_use', id, name, input, signature } : { type: 'tool_use', id, name, input });
      } else if (fr) {
        const name = typeof fr.name === 'string' ? fr.name : '';
        // Its id when a call has it; else (no id, or the client's own for a call that had none)
        // the first call of that name still waiting for its response.
        const given = typeof fr.id === 'string' && fr.id !== '' ? fr.id : undefined;
        const id =
          given !== undefined && ids.has(given)
            ? given
            : (pending.get(name)?.shift() ?? given ?? `call_${randomBase62(24)}`);
        out.push({ type: 'tool_result', toolUseId: id, ...resultOf(fr.response) });
      } else if (inline) {
        const mime = field(inline, 'mimeType');
        if (typeof inline.data !== 'string') throw invalid(`${at}.inlineData.data`, 'must be a base64 string.');
        // Audio, video and documents have no IR counterpart; only a Gemini upstream reads them.
        if (typeof mime === 'string' && DATA_URL_IMAGE.test(mime))
          out.push({ type: 'image', source: { kind: 'base64', mediaType: mime.toLowerCase(), data: inline.data } });
      } else if (file) {
        const uri = field(file, 'fileUri');
        const mime = field(file, 'mimeType');
        if (
          typeof uri === 'string' &&
          /^https?:\/\//i.test(uri) &&
          (typeof mime !== 'string' || DATA_URL_IMAGE.test(mime))
        )
          out.push({ type: 'image', source: { kind: 'url', url: uri } });
      }
      // executableCode, codeExecutionResult, videoMetadata: the vendor's own, nothing for the IR.
    });
    turns.push({ role: role === 'model' ? 'assistant' : 'user', content: out });
  });
  return turns;
}

/**
 * A streamed thought reaches the client in pieces, its signature on a last piece of its own
 * (stream-encode.ts), and comes back as those parts: one thinking block again, which a vendor
 * that checks the signature against the text (Anthropic) accepts.
 */
function joinThoughts(messages: IRMessage[]): IRMessage[] {
  for (const msg of messages) {
    if (msg.role !== 'assistant') continue;
    const out: IRContent[] = [];
    for (const c of msg.content) {
      const last = out.at(-1);
      if (c.type === 'thinking' && last?.type === 'thinking' && !last.signature) {
        out[out.length - 1] = c.signature
          ? { type: 'thinking', thinking: last.thinking + c.thinking, signature: c.signature }
          : { type: 'thinking', thinking: last.thinking + c.thinking };
      } else out.push(c);
    }
    msg.content = out;
  }
  return messages;
}

/** A functionResponse's `response` as a tool result: its text when it wraps one string, else its JSON. */
function resultOf(response: unknown): { content: string; isError?: boolean } {
  if (!isRecord(response)) return { content: typeof response === 'string' ? response : JSON.stringify(response ?? {}) };
  const keys = Object.keys(response);
  if (keys.length === 1) {
    const only = response[keys[0]!];
    if (keys[0] === 'error') return { content: typeof only === 'string' ? only : JSON.stringify(only), isError: true };
    if ((keys[0] === 'output' || keys[0] === 'result' || keys[0] === 'content') && typeof only === 'string')
      return { content: only };
  }
  return { content: JSON.stringify(response) };
}

function toolsToIR(tool: Record<string, unknown>, i: number): IRTool[] {
  const decls = field(tool, 'functionDeclarations');
  if (decls == null) return []; // hosted tools: priced or refused by the terms
  if (!Array.isArray(decls)) throw invalid(`tools[${i}].functionDeclarations`, 'must be an array.');
  return decls.map((d, j) => {
    const at = `tools[${i}].functionDeclarations[${j}]`;
    if (!isRecord(d) || typeof d.name !== 'string' || d.name === '')
      throw invalid(`${at}.name`, 'must be a non-empty string.');
    const json = field(d, 'parametersJsonSchema');
    const openApi = d.parameters;
    const parameters = isRecord(json)
      ? json
      : isRecord(openApi)
        ? (openApiToJsonSchema(openApi) as Record<string, unknown>)
        : { type: 'object', properties: {} };
    const out: IRTool = { name: d.name, parameters };
    if (typeof d.description === 'string') out.description = d.description;
    return out;
  });
}

function toolChoiceToIR(cfg: Record<string, unknown> | undefined): IRToolChoice | undefined {
  if (!cfg) return undefined;
  const mode = typeof cfg.mode === 'string' ? cfg.mode.toUpperCase() : 'AUTO';
  const allowed = field(cfg, 'allowedFunctionNames');
  if (mode === 'NONE') return { type: 'none' };
  if (mode === 'ANY') {
    if (Array.isArray(allowed) && allowed.length === 1 && typeof allowed[0] === 'string')
      return { type: 'tool', name: allowed[0] };
    return { type: 'required' };
  }
  return mode === 'AUTO' || mode === 'VALIDATED' ? { type: 'auto' } : undefined;
}
