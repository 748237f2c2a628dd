// An Anthropic upstream's event stream → IR events.

import { Observable, type OperatorFunction } from 'rxjs';
import type { ErrorKind } from '../../errors.js';
import { Envelope } from '../../stream/envelope.js';
import type { SSEEvent } from '../../stream/sse.js';
import type { TextLane } from '../../stream/text-lane.js';
import type { IRStreamEvent, IRUsage } from '../ir.js';
import { stopReasonFromWire } from './blocks.js';
import { kindFromAnthropicType } from './errors.js';
import { usageFromAnthropic } from './usage.js';

type Wire = Record<string, unknown>;

const isObject = (x: unknown): x is Wire => x !== null && typeof x === 'object' && !Array.isArray(x);

/** Later fields win, but only where they are present. */
function mergeUsage(
  a: Partial<IRUsage> | undefined,
  b: Partial<IRUsage> | null | undefined,
): Partial<IRUsage> | undefined {
  if (!b) return a;
  // Not `{ ...a }`: on Node 20 a spread copy that later gains a key gets a hidden class of its own.
  const out: Partial<IRUsage> = Object.assign({}, a);
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    if (b[key] !== undefined) out[key] = b[key];
  }
  return out;
}

class Decoder {
  /** Indices of blocks the IR carries; deltas of others (server tool calls…) are skipped. */
  private readonly open = new Set<number>();
  private startUsage: Partial<IRUsage> | undefined;
  private failed = false;
  /** The last text delta read in full, and its block (stream/envelope.ts). */
  readonly envelope = new Envelope();
  private textIndex = 0;

  /**
   * The IR block an event the envelope fits is a text delta of, and nothing else; -1 when none
   * is (stream/text-lane.ts). Any other event is read in full and makes the envelope forget.
   */
  get laneBlock(): number {
    return !this.failed && this.envelope.learned ? this.textIndex : -1;
  }

  push(ev: SSEEvent): IRStreamEvent[] {
    if (this.failed) return [];
    // That delta with other text: its block is still open, since any other event is read in full
    // and makes the envelope forget.
    const text = this.envelope.text(ev);
    if (text !== undefined) return [{ type: 'delta', index: this.textIndex, delta: { type: 'text', text } }];
    this.envelope.forget();
    let data: unknown;
    try {
      data = JSON.parse(ev.data);
    } catch {
      return this.fail('upstream', 'The upstream sent a malformed stream event.');
    }
    if (!isObject(data)) return this.fail('upstream', 'The upstream sent a malformed stream event.');
    // The payload's own type is authoritative; the `event:` line is only a fallback.
    const type = typeof data.type === 'string' ? data.type : ev.event;
    switch (type) {
      case 'message_start':
        return this.messageStart(data);
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data, ev);
      case 'content_block_stop': {
        const index = data.index;
        if (typeof index !== 'number' || !this.open.delete(index)) return [];
        return [{ type: 'block_stop', index }];
      }
      case 'message_delta':
        return this.messageDelta(data);
      case 'message_stop':
        return [{ type: 'end' }];
      case 'ping':
        return [{ type: 'ping' }];
      case 'error': {
        const error = isObject(data.error) ? data.error : {};
        const message =
          typeof error.message === 'string' && error.message !== '' ? error.message : 'The upstream stream failed.';
        return this.fail(kindFromAnthropicType(error.type), message);
      }
      default:
        return [];
    }
  }

  private fail(kind: ErrorKind, message: string): IRStreamEvent[] {
    this.failed = true;
    return [{ type: 'error', kind, message }];
  }

  private messageStart(data: Wire): IRStreamEvent[] {
    const message = isObject(data.message) ? data.message : {};
    // message_start's output_tokens is a running count, not the total; it is kept because it is
    // the best figure there is if the stream dies before message_delta. 'stop' overrides it.
    this.startUsage = usageFromAnthropic(message.usage) ?? undefined;
    const start: IRStreamEvent = {
      type: 'start',
      id: typeof message.id === 'string' ? message.id : '',
      model: typeof message.model === 'string' ? message.model : '',
    };
    if (this.startUsage) start.usage = this.startUsage;
    return [start];
  }

  private blockStart(data: Wire): IRStreamEvent[] {
    const index = data.index;
    const block = data.content_block;
    if (typeof index !== 'number' || !isObject(block)) return [];
    const out: IRStreamEvent[] = [];
    // Blocks normally start empty; anything they already hold is passed on as a first delta.
    switch (block.type) {
      case 'text':
        out.push({ type: 'block_start', index, block: { type: 'text' } });
        if (typeof block.text === 'string' && block.text !== '')
          out.push({ type: 'delta', index, delta: { type: 'text', text: block.text } });
        break;
      case 'thinking':
        out.push({ type: 'block_start', index, block: { type: 'thinking' } });
        if (typeof block.thinking === 'string' && block.thinking !== '') {
          out.push({ type: 'delta', index, delta: { type: 'thinking', thinking: block.thinking } });
        }
        if (typeof block.signature === 'string' && block.signature !== '') {
          out.push({ type: 'delta', index, delta: { type: 'signature', signature: block.signature } });
        }
        break;
      case 'redacted_thinking':
        out.push({
          type: 'block_start',
          index,
          block: { type: 'redacted_thinking', data: typeof block.data === 'string' ? block.data : '' },
        });
        break;
      case 'tool_use': {
        const id = typeof block.id === 'string' ? block.id : '';
        const name = typeof block.name === 'string' ? block.name : '';
        out.push({ type: 'block_start', index, block: { type: 'tool_use', id, name } });
        if (isObject(block.input) && Object.keys(block.input).length > 0) {
          out.push({ type: 'delta', index, delta: { type: 'input_json', partialJson: JSON.stringify(block.input) } });
        }
        break;
      }
      default:
        return [];
    }
    this.open.add(index);
    return out;
  }

  private blockDelta(data: Wire, ev: SSEEvent): IRStreamEvent[] {
    const index = data.index;
    const delta = data.delta;
    if (typeof index !== 'number' || !isObject(delta) || !this.open.has(index)) return [];
    switch (delta.type) {
      case 'text_delta':
        if (typeof delta.text !== 'string') return [];
        this.envelope.learn(ev);
        this.textIndex = index;
        return [{ type: 'delta', index, delta: { type: 'text', text: delta.text } }];
      case 'thinking_delta':
        return typeof delta.thinking === 'string'
          ? [{ type: 'delta', index, delta: { type: 'thinking', thinking: delta.thinking } }]
          : [];
      case 'signature_delta':
        return typeof delta.signature === 'string'
          ? [{ type: 'delta', index, delta: { type: 'signature', signature: delta.signature } }]
          : [];
      case 'input_json_delta':
        return typeof delta.partial_json === 'string'
          ? [{ type: 'delta', index, delta: { type: 'input_json', partialJson: delta.partial_json } }]
          : [];
      default:
        // citations_delta and future kinds: the IR has nowhere to put them.
        return [];
    }
  }

  private messageDelta(data: Wire): IRStreamEvent[] {
    const delta = isObject(data.delta) ? data.delta : {};
    // message_delta's counts are cumulative totals and win over message_start's; fields it
    // leaves out (older streams only send output_tokens) keep their message_start value, so
    // 'stop' carries the complete final usage.
    const usage = mergeUsage(this.startUsage, usageFromAnthropic(data.usage));
    const stop: IRStreamEvent = {
      type: 'stop',
      stopReason: stopReasonFromWire(delta.stop_reason),
      stopSequence: typeof delta.stop_sequence === 'string' ? delta.stop_sequence : null,
    };
    if (usage) stop.usage = usage;
    return [stop];
  }
}

export function decodeStream(lane?: TextLane): OperatorFunction<SSEEvent, IRStreamEvent> {
  return (source) =>
    new Observable<IRStreamEvent>((subscriber) => {
      const decoder = new Decoder();
      if (lane) {
        lane.envelope = decoder.envelope;
        // A text delta with no text is a delta all the same.
        lane.emptyDeltas = true;
      }
      return source.subscribe({
        next(ev) {
          for (const out of decoder.push(ev)) subscriber.next(out);
          if (lane) lane.block = decoder.laneBlock;
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          subscriber.complete();
        },
      });
    });
}
