// Content blocks between Anthropic's wire form and the IR. The IR is modelled on these blocks,
// so most of the work is renaming; the judgement calls are what to do with blocks one side
// cannot carry.

import type { IRContent, IRStopReason } from '../ir.js';

type Wire = Record<string, unknown>;

const isObject = (x: unknown): x is Wire => x !== null && typeof x === 'object' && !Array.isArray(x);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/**
 * One Anthropic block → IR, or null for a block the IR has no place for (documents, server tool
 * calls and their results, search results…). Those are dropped rather than rejected: a request
 * that stays on an Anthropic upstream is forwarded as sent, so only a translated request loses them.
 */
export function blockFromWire(b: unknown): IRContent | null {
  if (!isObject(b)) return null;
  switch (b.type) {
    case 'text': {
      const text = str(b.text);
      return text === undefined ? null : { type: 'text', text };
    }
    case 'image': {
      const source = b.source;
      if (!isObject(source)) return null;
      if (source.type === 'base64') {
        const mediaType = str(source.media_type);
        const data = str(source.data);
        if (mediaType === undefined || data === undefined) return null;
        return { type: 'image', source: { kind: 'base64', mediaType, data } };
      }
      if (source.type === 'url') {
        const url = str(source.url);
        return url === undefined ? null : { type: 'image', source: { kind: 'url', url } };
      }
      // File-API sources name a file only Anthropic can read.
      return null;
    }
    case 'thinking': {
      const thinking = str(b.thinking) ?? '';
      const signature = str(b.signature);
      // An empty signature is what the gateway itself renders for unsigned reasoning; it is no signature.
      return signature ? { type: 'thinking', thinking, signature } : { type: 'thinking', thinking };
    }
    case 'redacted_thinking': {
      const data = str(b.data);
      return data === undefined ? null : { type: 'redacted_thinking', data };
    }
    case 'tool_use': {
      const id = str(b.id);
      const name = str(b.name);
      if (id === undefined || name === undefined) return null;
      return { type: 'tool_use', id, name, input: b.input ?? {} };
    }
    case 'tool_result': {
      const toolUseId = str(b.tool_use_id);
      if (toolUseId === undefined) return null;
      let content: string | IRContent[] = '';
      if (typeof b.content === 'string') content = b.content;
      else if (Array.isArray(b.content)) {
        content = b.content
          .map(blockFromWire)
          .filter((c): c is IRContent => c !== null && (c.type === 'text' || c.type === 'image'));
      }
      const out: IRContent = { type: 'tool_result', toolUseId, content };
      if (b.is_error === true) out.isError = true;
      return out;
    }
    default:
      return null;
  }
}

/**
 * IR block → Anthropic. `upstream` decides unsigned thinking: Anthropic rejects a thinking block
 * without a valid signature, so a request drops it; a response to a client keeps the reasoning
 * with `signature: ""`, which the SDK's types accept (the field is a string) and which
 * `blockFromWire` reads back as unsigned, so it is dropped again if the client replays it.
 */
export function blockToWire(b: IRContent, upstream: boolean): Wire | null {
  switch (b.type) {
    case 'text':
      // Anthropic rejects empty text blocks in requests.
      if (upstream && b.text === '') return null;
      return { type: 'text', text: b.text };
    case 'image':
      return {
        type: 'image',
        source:
          b.source.kind === 'base64'
            ? { type: 'base64', media_type: b.source.mediaType, data: b.source.data }
            : { type: 'url', url: b.source.url },
      };
    case 'thinking':
      if (!b.signature) return upstream ? null : { type: 'thinking', thinking: b.thinking, signature: '' };
      return { type: 'thinking', thinking: b.thinking, signature: b.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: b.data };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, name: b.name, input: toolInput(b.input) };
    case 'tool_result': {
      const out: Wire = { type: 'tool_result', tool_use_id: b.toolUseId };
      if (typeof b.content === 'string') {
        if (b.content !== '') out.content = b.content;
      } else {
        // Only text and images may sit inside a tool_result.
        const inner = b.content
          .filter((c) => c.type === 'text' || c.type === 'image')
          .map((c) => blockToWire(c, upstream))
          .filter((c): c is Wire => c !== null);
        if (inner.length > 0) out.content = inner;
      }
      if (b.isError) out.is_error = true;
      return out;
    }
  }
}

/** Anthropic insists on an object; an OpenAI upstream may hand over unparsed or odd arguments. */
export function toolInput(input: unknown): Wire {
  if (isObject(input)) return input;
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (isObject(parsed)) return parsed;
    } catch {
      // Not JSON: nothing to keep in an object.
    }
  }
  return {};
}

const STOP_REASONS: ReadonlySet<string> = new Set<IRStopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'refusal',
  'pause_turn',
]);

export function stopReasonFromWire(x: unknown): IRStopReason | null {
  if (typeof x !== 'string') return null;
  if (STOP_REASONS.has(x)) return x as IRStopReason;
  // Ran out of context rather than of max_tokens: to a client it is the same "cut short".
  if (x === 'model_context_window_exceeded') return 'max_tokens';
  return 'end_turn';
}
