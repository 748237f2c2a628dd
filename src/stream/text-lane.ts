// A translated stream's commonest event, a text delta of the block the answer is writing, taken
// past its Observable. The upstream's decoder says when an event its envelope fits would be just
// that (a delta of IR block N and nothing else: no block opened or closed, no state changed);
// the client's encoder says when a text delta of block N would be written as fixed bytes around
// the text's JSON string (no role chunk, block start or other state owed first). While both hold,
// such an event goes from the upstream's bytes to the client's without being decoded, turned
// into IR, metered as a string or encoded: its JSON-escaped text is the same JSON string in the
// client's event, between the encoder's bytes. Any event the lane does not take goes down the
// Observable as before, and each side says again, after it, whether the lane holds.

import type { Envelope, TextSink } from './envelope.js';
import { framed } from './scratch.js';

const EMPTY = Buffer.alloc(0);

/** Encoder bytes around a text delta's JSON string content, for one IR block (or any: ANY_BLOCK). */
export interface TextFrame {
  block: number;
  head: Buffer;
  tail: Buffer;
  /** A delta with no text is written too (framed around nothing), not skipped. */
  writesEmpty: boolean;
}

/** A frame's block when the encoder writes every block's text the same way (chat chunks). */
export const ANY_BLOCK = -2;

export class TextLane {
  /** The decoder's envelope, set once it has one. */
  envelope: Envelope | undefined = undefined;
  /** The IR block an event the envelope fits is a text delta of; -1 while that does not hold. */
  block = -1;
  /** The decoder turns a fitting event with no text into a delta too (rather than nothing). */
  emptyDeltas = false;
  /** What the encoder writes around a text delta, while it would write one as nothing but that. */
  frame: TextFrame | undefined = undefined;

  constructor(private readonly meter: TextSink) {}

  /**
   * The client's bytes for `raw`, if the lane takes it (an empty buffer for a delta with no text,
   * which writes nothing); undefined if it goes down the Observable.
   */
  take(raw: Buffer): Buffer | undefined {
    const frame = this.frame;
    const envelope = this.envelope;
    if (
      frame === undefined ||
      envelope === undefined ||
      this.block === -1 ||
      (frame.block !== this.block && frame.block !== ANY_BLOCK)
    )
      return undefined;
    const end = envelope.match(raw);
    if (end === -1) return undefined;
    const start = envelope.textStart;
    if (start === end && !(this.emptyDeltas && frame.writesEmpty)) return EMPTY;
    envelope.noteMatched(this.meter, raw, end);
    return framed(frame.head, raw, start, end, frame.tail);
  }
}

const MARK = 'TEXT_LANE_MARK';

/**
 * A frame from how the encoder writes a text delta: `wire(text)` is the event's bytes for that
 * text, as the encoder builds them; the frame is what comes before and after its JSON string's
 * content, so that framed text is byte for byte what the encoder writes for text with no escapes.
 */
export function frameOf(block: number, writesEmpty: boolean, wire: (text: string) => Buffer): TextFrame {
  const bytes = wire(MARK);
  const at = bytes.indexOf(`"${MARK}"`) + 1;
  // A buffer of its own, head then tail: a view of Node's shared pool, which small Buffer.from
  // results are, would keep an 8 KB pool chunk alive for as long as the stream.
  const own = Buffer.allocUnsafeSlow(bytes.length - MARK.length);
  bytes.copy(own, 0, 0, at);
  bytes.copy(own, at, at + MARK.length);
  return { block, writesEmpty, head: own.subarray(0, at), tail: own.subarray(at) };
}
