// A same-dialect stream, from the upstream's socket to the client's, as one object per stream:
// it is the upstream body's consumer, the SSE reader's event sink and the client writer. The
// dialect's tap reads usage off each event and names the catalogue's model; the
// bytes go out as they came otherwise. Before, the same steps were an Observable with its
// subscriber, a valve, and a closure per step, held by every open stream for its whole life.

import type { BodySink, UpstreamBody } from '../upstream/client.js';
import { Envelope, type TextSink } from './envelope.js';
import { modelName, type ModelName } from './json-bytes.js';
import { SSEDecoder, type EventSink, type SSEEvent } from './sse.js';
import { ClientWriter, type StreamOutcome, type WriterParts } from './to-client.js';

/** A same-dialect stream's reader of events (dialects/…/upstream.ts). */
export interface EventTap {
  /** What the tap makes of one event read in full: the bytes to send, or null to drop it. */
  event(ev: SSEEvent): Buffer | null;
  /**
   * The bytes to send for an event the tap knows from its bytes alone (the last one with other
   * text); undefined for one that must be read in full.
   */
  raw?(raw: Buffer): Buffer | undefined;
}

/**
 * A tap that is its own envelope (stream/envelope.ts), one object per open stream: an event
 * with the learned event's bytes around other text goes out as its bytes, the model renamed if
 * the learned one had to be, its text noted; the dialect reads the rest in event().
 */
export abstract class EnvelopeTap<S extends TextSink> extends Envelope implements EventTap {
  protected readonly name: ModelName;

  constructor(
    protected readonly sink: S,
    model: string,
  ) {
    super();
    this.name = modelName(model);
  }

  raw(raw: Buffer): Buffer | undefined {
    const end = this.match(raw);
    if (end === -1) return undefined;
    this.noteMatched(this.sink, raw, end);
    return this.send(raw, this.name);
  }

  abstract event(ev: SSEEvent): Buffer | null;
}

/** Streams `body` to the client through `tap`; resolves once the outcome is decided. */
export function passThroughToClient(body: UpstreamBody, tap: EventTap, parts: WriterParts): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const stream = new PassThroughStream(body, tap, parts, resolve);
    parts.ex.onAbort(() => stream.abort());
    body.consume(stream);
  });
}

class PassThroughStream extends ClientWriter implements BodySink, EventSink {
  private readonly decoder = new SSEDecoder();
  private reading = false;

  constructor(
    private readonly body: UpstreamBody,
    private readonly tap: EventTap,
    parts: WriterParts,
    resolve: (outcome: StreamOutcome) => void,
  ) {
    super(parts, resolve);
  }

  protected midRead(): boolean {
    return this.reading;
  }

  protected pauseSource(): void {
    this.body.pause();
  }

  protected resumeSource(): void {
    this.body.resume();
  }

  get stopped(): boolean {
    return this.settled;
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    this.reading = true;
    try {
      this.decoder.push(chunk, this);
    } catch (err) {
      // A tap that throws is the gateway's bug: the stream fails rather than the process.
      this.reading = false;
      this.fail(err);
      this.body.cancel();
      return;
    }
    this.reading = false;
    this.flush();
  }

  raw(raw: Buffer): boolean {
    const out = this.tap.raw?.(raw);
    if (out === undefined) return false;
    this.next(out);
    return true;
  }

  event(ev: SSEEvent): void {
    const out = this.tap.event(ev);
    if (out !== null) this.next(out);
  }

  end(): void {
    if (this.settled) return;
    this.decoder.flush(this);
    this.flush();
    this.finish(true, false);
  }

  error(err: unknown): void {
    if (this.settled) return;
    this.fail(err);
  }

  private fail(err: unknown): void {
    this.flush();
    this.finish(false, false, err);
  }

  /** The client left: the upstream is stopped at once (what it produced is billed). */
  abort(): void {
    if (this.settled) return;
    // Decided first: cancelling reports an error to this sink, which is then ignored.
    this.finish(false, true);
    this.body.cancel();
  }
}
