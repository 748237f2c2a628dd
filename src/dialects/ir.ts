// The internal representation every dialect maps to and from. Translating between two
// dialects is always dialect A → IR → dialect B, so a new dialect is one folder.
// Shapes lean on Anthropic's content-block model because it is the richer of the two:
// OpenAI's flat fields (content, tool_calls, reasoning_content) map onto blocks losslessly.

export type IRImageSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };

export type IRContent =
  | { type: 'text'; text: string }
  | { type: 'image'; source: IRImageSource }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  // `signature`: Gemini's thoughtSignature on the call, which Gemini 3 wants back on that call.
  | { type: 'tool_use'; id: string; name: string; input: unknown; signature?: string }
  | { type: 'tool_result'; toolUseId: string; content: string | IRContent[]; isError?: boolean };

export interface IRMessage {
  /** `system`: an instruction at its place in the conversation (Anthropic's mid-conversation system message). */
  role: 'user' | 'assistant' | 'system';
  content: IRContent[];
}

export interface IRTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (OpenAI `parameters`, Anthropic `input_schema`). */
  parameters: Record<string, unknown>;
  /**
   * A freeform tool (Responses `custom`, Codex's apply_patch): its input is raw text. Elsewhere it
   * is a function of one string argument, `input`, and its calls carry `{input: text}`.
   */
  freeform?: boolean;
  /** The Responses `namespace` group the tool came from (its name is `<namespace>__<name>`). */
  namespace?: string;
}

export type IRToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type IRReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high';

export interface IRRequest {
  model: string;
  /** System and developer prompts, in order. */
  system: string[];
  messages: IRMessage[];
  tools?: IRTool[];
  toolChoice?: IRToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  stream: boolean;
  /** Chat surface: the client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Anthropic extended thinking budget, when the client asked for thinking. */
  thinking?: { budgetTokens: number };
  /**
   * How hard the model should reason: OpenAI `reasoning_effort`, Anthropic `output_config.effort`
   * or adaptive thinking. Only forwarded to routes whose model reasons (catalogue `reasoning`).
   */
  reasoningEffort?: IRReasoningEffort;
  /** End-user id (`user` / `metadata.user_id`). */
  user?: string;
  /**
   * A field only an upstream of the client's own dialect can serve (Gemini's `cachedContent`):
   * a translated route refuses the request with this 400.
   */
  sameDialectOnly?: { param: string; message: string };
  /**
   * The client asked for the conversation compacted (a Responses `compaction_trigger`): the
   * answer is one compaction item holding the model's summary, so it is always rendered by the
   * gateway, never passed through from an upstream of the client's dialect.
   */
  compaction?: boolean;
}

/** Token counts as billing sees them: `input` excludes cached tokens. */
export interface IRUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Of cacheWrite, tokens cached for an hour (priced apart). */
  cacheWrite1h?: number;
  /** Of input and output, audio tokens (priced apart). */
  audioIn?: number;
  audioOut?: number;
  /** Server-side web searches the upstream ran. */
  webSearches?: number;
}

export type IRStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn';

export interface IRResponse {
  id: string;
  model: string;
  content: IRContent[];
  stopReason: IRStopReason | null;
  stopSequence?: string | null;
  usage: IRUsage;
}

export type IRBlockStart =
  | { type: 'text' }
  | { type: 'thinking' }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; signature?: string };

export type IRDelta =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'signature'; signature: string }
  | { type: 'input_json'; partialJson: string };

/** One step of a streamed answer. `index` is the position of the block in the content array. */
export type IRStreamEvent =
  | { type: 'start'; id: string; model: string; usage?: Partial<IRUsage> }
  | { type: 'block_start'; index: number; block: IRBlockStart }
  | { type: 'delta'; index: number; delta: IRDelta }
  | { type: 'block_stop'; index: number }
  | { type: 'stop'; stopReason: IRStopReason | null; stopSequence?: string | null; usage?: Partial<IRUsage> }
  | { type: 'ping' }
  | { type: 'error'; kind: import('../errors.js').ErrorKind; message: string }
  | { type: 'end' };

export const ZERO_USAGE: IRUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
