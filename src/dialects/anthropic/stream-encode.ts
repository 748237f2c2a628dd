// IR events → the /v1/messages event stream.
//
// The IR may come from an OpenAI upstream, which knows less than Anthropic does when the answer
// starts (no input count) and numbers blocks its own way. The encoder therefore owns the wire
// invariants the Anthropic SDK relies on: message_start first, block indices 0, 1, 2… in order
// (the SDK pushes each content_block_start onto its array and addresses deltas by index), one
// block open at a time, a message_delta carrying the complete usage, and message_stop last.

import { randomBytes } from 'node:crypto';
import { Observable, type OperatorFunction } from 'rxjs';
import { encodeSSE, markFinal } from '../../stream/sse.js';
import { frameOf, type TextFrame, type TextLane } from '../../stream/text-lane.js';
import type { RenderContext } from '../dialect.js';
import type { IRBlockStart, IRDelta, IRStreamEvent, IRUsage } from '../ir.js';
import { errorPayload } from './errors.js';

type BlockKind = IRBlockStart['type'];

interface OutBlock {
  index: number;
  /** The IR block it was opened for. */
  irIndex: number;
  kind: BlockKind;
  open: boolean;
  /** Signature fragments, sent as one signature_delta at the block's end: the SDK replaces, not appends. */
  signature: string;
}

const DELTA_BLOCK: Record<IRDelta['type'], BlockKind> = {
  text: 'text',
  thinking: 'thinking',
  signature: 'thinking',
  input_json: 'tool_use',
};

function event(type: string, payload: Record<string, unknown>): Buffer {
  return encodeSSE(JSON.stringify({ type, ...payload }), type);
}

function defined(u: Partial<IRUsage> | undefined): Partial<IRUsage> {
  const out: Partial<IRUsage> = {};
  if (!u) return out;
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    if (typeof u[key] === 'number') out[key] = u[key];
  }
  return out;
}

class Encoder {
  private started = false;
  private stopped = false;
  private ended = false;
  private failed = false;
  private usage: Partial<IRUsage> = {};
  /** IR index → the block emitted for it. */
  private readonly blocks = new Map<number, OutBlock>();
  private current: OutBlock | undefined;
  private nextIndex = 0;

  constructor(private readonly ctx: RenderContext) {}

  push(ev: IRStreamEvent): Buffer[] {
    if (this.failed || this.ended) return [];
    const out: Buffer[] = [];
    switch (ev.type) {
      case 'start':
        if (!this.started) {
          this.usage = defined(ev.usage);
          this.start(out);
        }
        break;
      case 'block_start': {
        this.start(out);
        const existing = this.blocks.get(ev.index);
        if (existing?.open) break;
        this.openBlock(out, ev.index, ev.block);
        break;
      }
      case 'delta':
        this.start(out);
        this.delta(out, ev.index, ev.delta);
        break;
      case 'block_stop': {
        const block = this.blocks.get(ev.index);
        if (block?.open) this.closeBlock(out, block);
        break;
      }
      case 'stop':
        this.start(out);
        this.stop(out, ev.stopReason, ev.stopSequence ?? null, ev.usage);
        break;
      case 'ping':
        if (this.started) out.push(event('ping', {}));
        break;
      case 'error': {
        // Anthropic sends nothing after an error event, so neither does the gateway.
        this.failed = true;
        // With request_id when known, like the gateway's own error events and HTTP errors
        // (API.md §1 gives mid-stream errors the same envelope): the error is the gateway's
        // answer now, whatever upstream it was translated from.
        const payload = errorPayload(ev.kind, ev.message);
        const body = this.ctx.requestId ? { ...payload, request_id: this.ctx.requestId } : payload;
        out.push(encodeSSE(JSON.stringify(body), 'error'));
        break;
      }
      case 'end':
        this.start(out);
        this.finish(out);
        break;
    }
    return out;
  }

  /**
   * How a text delta of the open block is written, while that is all one would write: the
   * message started, the block open, text, and the stream neither failed nor ended
   * (stream/text-lane.ts).
   */
  textFrame(): TextFrame | undefined {
    const b = this.current;
    if (!this.started || this.failed || this.ended || b === undefined || !b.open || b.kind !== 'text') return undefined;
    return textFrame(b.index, b.irIndex);
  }

  /** At completion: an answer that got its stop but no explicit end is still complete. */
  complete(): Buffer[] {
    if (this.failed || this.ended || !this.stopped) return [];
    const out: Buffer[] = [];
    this.finish(out);
    return out;
  }

  private start(out: Buffer[]): void {
    if (this.started) return;
    this.started = true;
    out.push(
      event('message_start', {
        message: {
          id: this.ctx.id,
          type: 'message',
          role: 'assistant',
          model: this.ctx.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          // Input may only be known at the end (OpenAI upstreams); message_delta then completes it.
          usage: {
            input_tokens: this.usage.input ?? 0,
            cache_creation_input_tokens: this.usage.cacheWrite ?? 0,
            cache_read_input_tokens: this.usage.cacheRead ?? 0,
            output_tokens: this.usage.output ?? 0,
          },
        },
      }),
    );
  }

  private openBlock(out: Buffer[], irIndex: number, start: IRBlockStart): OutBlock {
    if (this.current?.open) this.closeBlock(out, this.current);
    const block: OutBlock = { index: this.nextIndex++, irIndex, kind: start.type, open: true, signature: '' };
    this.blocks.set(irIndex, block);
    this.current = block;
    let contentBlock: Record<string, unknown>;
    switch (start.type) {
      case 'text':
        contentBlock = { type: 'text', text: '' };
        break;
      case 'thinking':
        contentBlock = { type: 'thinking', thinking: '', signature: '' };
        break;
      case 'redacted_thinking':
        contentBlock = { type: 'redacted_thinking', data: start.data };
        break;
      case 'tool_use':
        contentBlock = { type: 'tool_use', id: start.id, name: start.name, input: {} };
        break;
    }
    out.push(event('content_block_start', { index: block.index, content_block: contentBlock }));
    return block;
  }

  private closeBlock(out: Buffer[], block: OutBlock): void {
    if (block.signature !== '') {
      out.push(deltaEvent(block.index, 'signature_delta', 'signature', block.signature));
      block.signature = '';
    }
    block.open = false;
    out.push(event('content_block_stop', { index: block.index }));
  }

  private delta(out: Buffer[], irIndex: number, delta: IRDelta): void {
    let block = this.blocks.get(irIndex);
    if (!block) {
      // A delta without its block_start: open the block it implies rather than lose the content.
      const kind = DELTA_BLOCK[delta.type];
      const start: IRBlockStart =
        kind === 'tool_use'
          ? { type: 'tool_use', id: `toolu_${randomBytes(12).toString('hex')}`, name: '' }
          : { type: kind as 'text' | 'thinking' };
      block = this.openBlock(out, irIndex, start);
    }
    // A delta of another block's kind would be dropped by the SDK anyway.
    if (DELTA_BLOCK[delta.type] !== block.kind) return;
    switch (delta.type) {
      case 'text':
        out.push(deltaEvent(block.index, 'text_delta', 'text', delta.text));
        break;
      case 'thinking':
        out.push(deltaEvent(block.index, 'thinking_delta', 'thinking', delta.thinking));
        break;
      case 'signature':
        if (block.open) block.signature += delta.signature;
        else out.push(deltaEvent(block.index, 'signature_delta', 'signature', delta.signature));
        break;
      case 'input_json':
        out.push(deltaEvent(block.index, 'input_json_delta', 'partial_json', delta.partialJson));
        break;
    }
  }

  private closeAll(out: Buffer[]): void {
    if (this.current?.open) this.closeBlock(out, this.current);
  }

  private stop(
    out: Buffer[],
    stopReason: string | null,
    stopSequence: string | null,
    usage: Partial<IRUsage> | undefined,
  ): void {
    if (this.stopped) return;
    this.stopped = true;
    this.closeAll(out);
    this.usage = { ...this.usage, ...defined(usage) };
    const u = this.usage;
    // The SDK copies output_tokens unconditionally and the other counts only when present, so
    // output_tokens is always sent and the rest whenever known: that way the SDK's final
    // message has the input and cache counts even when message_start could only say 0.
    const wireUsage: Record<string, number> = {};
    if (u.input !== undefined) wireUsage.input_tokens = u.input;
    if (u.cacheWrite !== undefined) wireUsage.cache_creation_input_tokens = u.cacheWrite;
    if (u.cacheRead !== undefined) wireUsage.cache_read_input_tokens = u.cacheRead;
    wireUsage.output_tokens = u.output ?? 0;
    out.push(
      event('message_delta', {
        delta: { stop_reason: stopReason ?? 'end_turn', stop_sequence: stopSequence },
        usage: wireUsage,
      }),
    );
  }

  private finish(out: Buffer[]): void {
    this.closeAll(out);
    if (!this.stopped) this.stop(out, null, null, undefined);
    this.ended = true;
    out.push(markFinal(event('message_stop', {})));
  }
}

/**
 * A content_block_delta, written out rather than built as an object and serialised: one per
 * token of a translated stream. The same bytes as event('content_block_delta', …) would give.
 */
function deltaEvent(index: number, type: string, field: string, value: string): Buffer {
  return Buffer.from(
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${field}":${JSON.stringify(value)}}}\n\n`,
  );
}

/** Frames by block number and IR block: they name nothing of the answer, so streams share them. */
const FRAMES = new Map<number, TextFrame>();

function textFrame(index: number, irIndex: number): TextFrame {
  const key = index * 65536 + irIndex;
  let frame = FRAMES.get(key);
  if (!frame) {
    frame = frameOf(irIndex, true, (text) => deltaEvent(index, 'text_delta', 'text', text));
    // Answers of many blocks are rare: past a few hundred frames, they are made per stream.
    if (FRAMES.size < 256) FRAMES.set(key, frame);
  }
  return frame;
}

export function encodeStream(ctx: RenderContext, lane?: TextLane): OperatorFunction<IRStreamEvent, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      const encoder = new Encoder(ctx);
      return source.subscribe({
        next(ev) {
          for (const buf of encoder.push(ev)) subscriber.next(buf);
          if (lane) lane.frame = encoder.textFrame();
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          for (const buf of encoder.complete()) subscriber.next(buf);
          subscriber.complete();
        },
      });
    });
}
