// Scenario selection and the dialect-neutral "plan" of an answer. A plan describes what the
// fake model says (blocks of text, thinking or tool calls, each split into deltas) and how it
// is delivered (pace, ending); wire.ts turns it into either vendor's bytes. Keeping the content
// dialect-neutral is what lets a test predict the same answer whichever way the gateway routes.

/** The vendor dialects the fake speaks: OpenAI chat, Anthropic Messages, OpenAI Responses, Gemini. */
export type Dialect = 'openai' | 'anthropic' | 'responses' | 'gemini';

export const SCENARIO_NAMES = [
  'text',
  'paced',
  'long',
  'tools',
  'parallel_tools',
  'tool_round',
  'cached',
  'thinking',
  'max_tokens',
  'stop_sequence',
  'echo',
  'error',
  'slow',
  'drop',
  'midstream_error',
  'replay',
  'fill',
  'no_usage',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface Scenario {
  name: ScenarioName;
  arg: string | undefined;
}

export const TEXT_ANSWER = 'Hello from the fake upstream.';
/** Word-sized deltas, leading space kept, the way real tokenizers split. */
export const TEXT_WORDS: readonly string[] = TEXT_ANSWER.split(/(?= )/);
export const THINKING_TEXT = 'Let me think about this.';
const THINKING_PIECES: readonly string[] = ['Let me think', ' about this.'];
const TOOL_PREAMBLE: readonly string[] = ['Let', ' me', ' check.'];

/**
 * Looks like a real signature (base64 of opaque bytes) so that code which validates or
 * round-trips signatures is exercised; fixed so tests can assert it came back byte for byte.
 */
export const FAKE_SIGNATURE =
  'EqQBCkgIBxABGAIqQFakeUpstreamSignatureAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn8=';

const SCENARIO_SET: ReadonlySet<string> = new Set(SCENARIO_NAMES);

export function parseScenario(spec: string): Scenario | undefined {
  const colon = spec.indexOf(':');
  const name = (colon < 0 ? spec : spec.slice(0, colon)).trim();
  if (!SCENARIO_SET.has(name)) return undefined;
  return { name: name as ScenarioName, arg: colon < 0 ? undefined : spec.slice(colon + 1).trim() };
}

// No whitespace inside: a directive is a token, and replay paths never contain spaces.
const DIRECTIVE = /\[\[([a-z_]+(?::[^\]\s]*)?)\]\]/g;

/**
 * Calls `fn` for every piece of prompt text: system prompt, string contents, text parts, and
 * tool results. Tool-call arguments are left out on purpose: OpenAI carries them as a JSON
 * string and Anthropic as an object, so their length changes under translation, while the
 * pieces visited here survive it unchanged and the count stays the same in both dialects.
 */
function forEachPromptText(body: any, dialect: Dialect, fn: (text: string) => void): void {
  if (body === null || typeof body !== 'object') return;
  if (dialect === 'responses') return forEachResponsesText(body, fn);
  if (dialect === 'gemini') return forEachGeminiText(body, fn);
  if (dialect === 'anthropic') visitContent(body.system, fn);
  const messages = body.messages;
  if (!Array.isArray(messages)) return;
  for (const m of messages) {
    if (m !== null && typeof m === 'object') visitContent(m.content, fn);
  }
}

/** Responses: `instructions`, then `input` (a string, or items: messages and tool outputs). */
function forEachResponsesText(body: any, fn: (text: string) => void): void {
  if (typeof body.instructions === 'string') fn(body.instructions);
  if (typeof body.input === 'string') return fn(body.input);
  if (!Array.isArray(body.input)) return;
  for (const item of body.input) {
    if (item === null || typeof item !== 'object') continue;
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      if (typeof item.output === 'string') fn(item.output);
    } else if (item.type === 'message' || (item.type === undefined && typeof item.role === 'string')) {
      if (typeof item.content === 'string') fn(item.content);
      else if (Array.isArray(item.content)) {
        for (const part of item.content) {
          if ((part?.type === 'input_text' || part?.type === 'output_text') && typeof part.text === 'string')
            fn(part.text);
        }
      }
    }
  }
}

/** Gemini: systemInstruction, then text parts and function responses of `contents`. */
function forEachGeminiText(body: any, fn: (text: string) => void): void {
  const system = body.systemInstruction ?? body.system_instruction;
  if (typeof system === 'string') fn(system);
  else for (const p of Array.isArray(system?.parts) ? system.parts : []) if (typeof p?.text === 'string') fn(p.text);
  for (const c of Array.isArray(body.contents) ? body.contents : []) {
    for (const p of Array.isArray(c?.parts) ? c.parts : []) {
      if (typeof p?.text === 'string' && p.thought !== true) fn(p.text);
      const response = (p?.functionResponse ?? p?.function_response)?.response;
      if (response && typeof response === 'object') {
        const only = Object.values(response);
        if (only.length === 1 && typeof only[0] === 'string') fn(only[0]);
      }
    }
  }
}

function visitContent(content: unknown, fn: (text: string) => void): void {
  if (typeof content === 'string') {
    fn(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (part === null || typeof part !== 'object') continue;
    if (part.type === 'text' && typeof part.text === 'string') fn(part.text);
    else if (part.type === 'tool_result') visitContent(part.content, fn);
  }
}

/** ceil(characters of prompt text / 4), at least 1: cheap, deterministic, dialect-stable. */
export function countPromptTokens(body: unknown, dialect: Dialect): number {
  let chars = 0;
  forEachPromptText(body, dialect, (text) => {
    chars += text.length;
  });
  return Math.max(1, Math.ceil(chars / 4));
}

/** Every piece of prompt text, directives removed, joined by spaces. */
export function promptText(body: any, dialect: Dialect): string {
  const pieces: string[] = [];
  forEachPromptText(body, dialect, (text) => pieces.push(text.replace(DIRECTIVE, '').trim()));
  return pieces.filter((p) => p !== '').join(' ');
}

/**
 * Header, then a `[[directive]]` in the prompt, then the model name, then `text`. Among several
 * directives the last one wins, so the newest turn of a conversation decides.
 * Returns an error string only for an unknown header value: a typo there is a test bug worth
 * surfacing, whereas `[[…]]` in prompt text may be ordinary content.
 */
export function selectScenario(header: string | undefined, body: any, dialect: Dialect): Scenario | { error: string } {
  if (header !== undefined && header !== '') {
    const s = parseScenario(header);
    return s ?? { error: `unknown fake scenario in x-fake-scenario: ${header}` };
  }
  let found: Scenario | undefined;
  forEachPromptText(body, dialect, (text) => {
    if (!text.includes('[[')) return;
    for (const m of text.matchAll(DIRECTIVE)) {
      const s = parseScenario(m[1]!);
      if (s) found = s;
    }
  });
  if (found) return found;
  if (body && typeof body.model === 'string') {
    const s = parseScenario(body.model);
    if (s) return s;
  }
  return { name: 'text', arg: undefined };
}

interface RunBase {
  count: number;
  piece(i: number): string;
}
/** Deltas produced on demand, so a long paced stream does not hold all its pieces at once. */
export type TextRun = (RunBase & { kind: 'text' }) | (RunBase & { kind: 'thinking' });
export interface ToolCall {
  kind: 'tool';
  name: string;
  /** Argument JSON in fragments; the empty opening fragment is added by the renderers. */
  args: string[];
  openaiId: string;
  anthropicId: string;
}
export type Block = TextRun | ToolCall;

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence';

export interface Plan {
  scenario: ScenarioName;
  blocks: Block[];
  stopReason: StopReason;
  stopSequence: string | null;
  /** Prompt tokens, cached ones included (OpenAI's `prompt_tokens`). */
  promptTokens: number;
  cacheRead: number;
  cacheCreation: number;
  outputTokens: number;
  reasoningTokens: number;
  /** Gap before each delta; 0 means as fast as the socket takes them. */
  intervalMs: number;
  /** Wait before the status line. */
  headerDelayMs: number;
  ending: 'complete' | 'drop' | 'midstream_error';
  /** OpenAI `n`: choices answered, each with all the blocks (outputTokens counts them all). */
  choices: number;
  /** Anthropic: searches run by the web_search server tool (one when the request offers it). */
  webSearches: number;
  /** OpenAI: the answer says nothing of usage (vendors that ignore include_usage). */
  reportUsage: boolean;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Ids only need to look like the vendor's and not repeat; Math.random is plenty and cheap. */
export function randomId(prefix: string, length: number): string {
  let out = prefix;
  for (let i = 0; i < length; i++) out += ALNUM[(Math.random() * ALNUM.length) | 0];
  return out;
}

function fixedRun(kind: TextRun['kind'], pieces: readonly string[]): TextRun {
  return { kind, count: pieces.length, piece: (i) => pieces[i]! };
}

/** Splits into `n` pieces without cutting a surrogate pair, so each piece is valid UTF-16. */
export function splitString(s: string, n: number): string[] {
  if (s.length === 0) return [''];
  const parts: string[] = [];
  let start = 0;
  for (let k = 1; k <= n; k++) {
    let end = k === n ? s.length : Math.round((s.length * k) / n);
    if (end > start && end < s.length && isHighSurrogate(s.charCodeAt(end - 1))) end++;
    if (end > start) parts.push(s.slice(start, end));
    start = Math.max(start, end);
  }
  return parts;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function chunkString(s: string, size: number): string[] {
  return splitString(s, Math.max(1, Math.ceil(s.length / size)));
}

function intArg(value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= min ? Math.floor(n) : fallback;
}

function toolCall(name: string, args: object): ToolCall {
  return {
    kind: 'tool',
    name,
    args: splitString(JSON.stringify(args), 3),
    openaiId: randomId('call_', 24),
    anthropicId: randomId('toolu_01', 22),
  };
}

function firstStopSequence(body: any): string {
  const seqs = body?.stop_sequences ?? body?.stop ?? body?.generationConfig?.stopSequences;
  if (typeof seqs === 'string' && seqs !== '') return seqs;
  if (Array.isArray(seqs) && typeof seqs[0] === 'string') return seqs[0];
  return 'END';
}

// About 1 KB per chunk for the slow-reader tests; built once, shared by every stream.
const KILOBYTE_PIECE = 'lorem ipsum dolor sit amet '.repeat(38).slice(0, 1000) + '\n';

/** Scenarios whose answer is not a model message; server.ts handles them directly. */
export type NonPlanScenario = 'error' | 'replay';

export function buildPlan(
  scenario: Scenario & { name: Exclude<ScenarioName, NonPlanScenario> },
  body: any,
  dialect: Dialect,
): Plan {
  const plan: Plan = {
    scenario: scenario.name,
    blocks: [fixedRun('text', TEXT_WORDS)],
    stopReason: 'end_turn',
    stopSequence: null,
    promptTokens: countPromptTokens(body, dialect),
    cacheRead: 0,
    cacheCreation: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    intervalMs: 0,
    headerDelayMs: 0,
    ending: 'complete',
    choices: 1,
    webSearches:
      dialect === 'anthropic' &&
      Array.isArray(body?.tools) &&
      body.tools.some((x: any) => typeof x?.type === 'string' && x.type.startsWith('web_search_'))
        ? 1
        : 0,
    reportUsage: true,
  };
  const arg = scenario.arg;
  switch (scenario.name) {
    case 'text':
      break;
    case 'paced': {
      const [n, ms] = (arg ?? '').split(':');
      const count = intArg(n, 20);
      plan.intervalMs = intArg(ms, 20);
      plan.blocks = [{ kind: 'text', count, piece: (i) => `tok${i} ` }];
      break;
    }
    case 'long': {
      const count = intArg(arg, 64);
      plan.blocks = [{ kind: 'text', count, piece: () => KILOBYTE_PIECE }];
      break;
    }
    case 'tools':
    case 'parallel_tools': {
      const calls = [toolCall('get_weather', { city: 'Paris' })];
      if (scenario.name === 'parallel_tools') calls.push(toolCall('get_time', { tz: 'Europe/Paris' }));
      // Claude says a few words before calling tools; OpenAI models answer with content null.
      plan.blocks = dialect === 'anthropic' ? [fixedRun('text', TOOL_PREAMBLE), ...calls] : calls;
      plan.stopReason = 'tool_use';
      break;
    }
    case 'tool_round': {
      // One round of an agent loop: call a tool, then answer in words once its result is back.
      if (endsWithToolResult(body, dialect)) break;
      const colon = (arg ?? '').indexOf(':');
      const name = (colon < 0 ? arg : arg!.slice(0, colon)) || firstToolName(body) || 'get_weather';
      const args: object = colon < 0 ? { city: 'Paris' } : JSON.parse(arg!.slice(colon + 1));
      plan.blocks = [toolCall(name, args)];
      plan.stopReason = 'tool_use';
      break;
    }
    case 'cached':
      plan.cacheRead = Math.floor(plan.promptTokens * 0.8);
      plan.cacheCreation = 10;
      break;
    case 'thinking':
      plan.blocks = [fixedRun('thinking', THINKING_PIECES), fixedRun('text', TEXT_WORDS)];
      plan.reasoningTokens = THINKING_PIECES.length;
      break;
    case 'max_tokens':
      plan.blocks = [fixedRun('text', TEXT_WORDS.slice(0, 3))];
      plan.stopReason = 'max_tokens';
      break;
    case 'stop_sequence':
      plan.stopReason = 'stop_sequence';
      plan.stopSequence = firstStopSequence(body);
      break;
    case 'echo':
      plan.blocks = [fixedRun('text', chunkString(JSON.stringify(body), 16))];
      break;
    case 'slow':
      plan.headerDelayMs = intArg(arg, 500);
      break;
    case 'drop': {
      const count = intArg(arg, 3);
      plan.blocks = [{ kind: 'text', count, piece: (i) => TEXT_WORDS[i % TEXT_WORDS.length]! }];
      plan.ending = 'drop';
      break;
    }
    case 'midstream_error':
      plan.blocks = [fixedRun('text', TEXT_WORDS.slice(0, 3))];
      plan.ending = 'midstream_error';
      break;
    case 'no_usage': {
      const count = intArg(arg, 20);
      plan.blocks = [{ kind: 'text', count, piece: (i) => `tok${i} ` }];
      plan.reportUsage = false;
      break;
    }
    case 'fill': {
      // A model that writes until its cap, honouring only `max_tokens` (as many OpenAI-compatible
      // vendors do: `max_completion_tokens` is ignored), with `n` choices on the OpenAI dialect.
      const capField =
        dialect === 'responses'
          ? body?.max_output_tokens
          : dialect === 'gemini'
            ? body?.generationConfig?.maxOutputTokens
            : body?.max_tokens;
      const cap = typeof capField === 'number' ? capField : 16;
      plan.blocks = [{ kind: 'text', count: Math.min(cap, 200_000), piece: () => 'w ' }];
      plan.intervalMs = intArg(arg, 0);
      plan.stopReason = 'max_tokens';
      if (dialect === 'openai' && typeof body?.n === 'number' && body.n > 1) plan.choices = Math.min(body.n, 128);
      break;
    }
  }
  plan.outputTokens = plan.choices * plan.blocks.reduce((n, b) => n + (b.kind === 'tool' ? b.args.length : b.count), 0);
  return plan;
}

/** The first tool the request declares, in either dialect's shape. */
function firstToolName(body: any): string | undefined {
  const tool = Array.isArray(body?.tools) ? body.tools[0] : undefined;
  const name = tool?.function?.name ?? tool?.name ?? tool?.functionDeclarations?.[0]?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The conversation's last turn hands back a tool's result (Anthropic tool_result block, OpenAI tool message). */
function endsWithToolResult(body: any, dialect: Dialect): boolean {
  // A system message after the result (Claude Code announcing changed tools) is not a new turn.
  const last = Array.isArray(body?.messages)
    ? body.messages.filter((m: any) => m?.role !== 'system').at(-1)
    : undefined;
  if (dialect === 'responses') {
    const item = Array.isArray(body?.input)
      ? body.input.filter((i: any) => i?.role !== 'system' && i?.role !== 'developer').at(-1)
      : undefined;
    return item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output';
  }
  if (dialect === 'openai') return last?.role === 'tool';
  if (dialect === 'gemini') {
    const turn = Array.isArray(body?.contents) ? body.contents.at(-1) : undefined;
    return Array.isArray(turn?.parts) && turn.parts.some((p: any) => p?.functionResponse);
  }
  return (
    last?.role === 'user' && Array.isArray(last.content) && last.content.some((b: any) => b?.type === 'tool_result')
  );
}

/** The full text of a run, for non-streamed answers. */
export function runText(run: TextRun): string {
  let s = '';
  for (let i = 0; i < run.count; i++) s += run.piece(i);
  return s;
}
