// One HTTP exchange on uWS: the request, read up front (./exchange-request.ts: method, path,
// headers, the body, the client's address, aborts), and its answer. uWS forbids touching `res`
// after an abort, so every write of the answer goes through here.

import { STATUS_CODES } from 'node:http';
import { ExchangeRequest } from './exchange-request.js';

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;

export class Exchange extends ExchangeRequest {
  /** True once the status line went out: from then on errors can only be written in-band. */
  headersSent = false;
  status = 0;
  private writableListener?: () => void;
  /** A stream's status and headers, until its first bytes carry them (see beginStream). */
  private pendingHead?: { status: number; headers: Record<string, string> };

  private writeHead(status: number, headers: Record<string, string>) {
    this.status = status;
    this.headersSent = true;
    this.res.writeStatus(statusLine(status));
    this.res.writeHeader('x-request-id', this.requestId);
    for (const k in headers) this.res.writeHeader(k, headers[k]);
  }

  /** Inside a cork: a stream's status and headers, if they have not gone out yet. */
  private writePendingHead() {
    const head = this.pendingHead;
    if (!head) return;
    this.pendingHead = undefined;
    this.writeHead(head.status, head.headers);
  }

  /** A whole response in one go. */
  send(status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    // uWS writes `Connection: close` itself, and closes once the answer is out.
    const close = this.framingError !== undefined || this.bodyLeft;
    this.res.cork(() => {
      if (this.head && !close) {
        // A HEAD answer says how long the body would be, and sends none of it: a body after it
        // would be read by the client as the start of the next response. The length goes in as
        // a header because this uWS build, given endWithoutBody(length), leaves the connection
        // unable to answer the next request.
        this.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
        this.res.endWithoutBody();
        return;
      }
      this.writeHead(status, headers);
      this.res.end(this.head ? '' : body, close);
    });
  }

  json(status: number, value: unknown, headers: Record<string, string> = {}): void {
    this.send(status, JSON.stringify(value), { 'content-type': 'application/json', ...headers });
  }

  /**
   * Status and headers of a streamed response; the body follows through write(). They are
   * committed now and sent with the first chunk: uWS ends a chunked response's head only with
   * its first body bytes anyway, so a head sent alone was of no use to the client, and it cost
   * a send of its own, which on loopback costs as much as the rest of a token's handling.
   */
  beginStream(status: number, headers: Record<string, string>): void {
    if (this.aborted || this.headersSent) return;
    this.status = status;
    this.headersSent = true;
    this.pendingHead = { status, headers };
  }

  /**
   * Write a chunk of a streamed body. uWS always takes the bytes (it buffers what the socket
   * cannot), and returns false when the socket is full: the caller must stop producing until
   * onWritable fires. That is how a slow client ends up pausing the upstream.
   */
  write(chunk: Buffer | string): boolean {
    if (this.aborted || this.finished || this.head) return true;
    corked.ex = this;
    corked.chunk = chunk;
    this.res.cork(corkedWrite);
    corked.ex = undefined;
    corked.chunk = '';
    return corked.ok;
  }

  /** Several chunks of a streamed body in one corked write (one send); false as write() says. */
  writeAll(chunks: readonly Buffer[]): boolean {
    if (this.aborted || this.finished || this.head) return true;
    corked.ex = this;
    corked.chunks = chunks;
    this.res.cork(corkedWriteAll);
    corked.ex = undefined;
    corked.chunks = NO_CHUNKS;
    return corked.ok;
  }

  /** write()'s corked part (see `corked`). */
  writeCorkedChunk(): void {
    this.writePendingHead();
    corked.ok = this.res.write(corked.chunk);
  }

  /** writeAll()'s corked part. */
  writeCorkedChunks(): void {
    this.writePendingHead();
    let ok = true;
    for (const chunk of corked.chunks) ok = this.res.write(chunk) && ok;
    corked.ok = ok;
  }

  /** Call `listener` once the socket has room again. */
  onWritable(listener: () => void): void {
    if (!this.writableListener) {
      this.res.onWritable(() => {
        const l = this.writableListener;
        this.writableListener = undefined;
        l?.();
        return true;
      });
    }
    this.writableListener = listener;
  }

  /** Resolves when the socket has room again, or the client has gone (nothing will drain then). */
  whenWritable(): Promise<void> {
    return new Promise((resume) => {
      const off = this.onAbort(resume);
      this.onWritable(() => {
        off();
        resume();
      });
    });
  }

  end(chunk?: Buffer | string): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.cork(() => {
      this.writePendingHead();
      if (this.head) this.res.endWithoutBody();
      else this.res.end(chunk);
    });
  }

  /** The last chunks of a streamed body and its end, in one corked write. */
  endWith(chunks: readonly Buffer[]): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    corked.ex = this;
    corked.chunks = chunks;
    this.res.cork(corkedEnd);
    corked.ex = undefined;
    corked.chunks = NO_CHUNKS;
  }

  /** endWith()'s corked part. */
  endCorked(): void {
    this.writePendingHead();
    if (this.head) return void this.res.endWithoutBody();
    for (const chunk of corked.chunks) this.res.write(chunk);
    this.res.end();
  }

  /** Drop the connection (used when a response cannot be completed). */
  close(): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.close();
  }
}

/**
 * What the corked write of a stream's chunk works on. A stream writes a chunk per token: one
 * shared callback rather than a closure per chunk, or one per response that would live as long
 * as the stream. cork() runs it at once; a write nested in it (uWS calling back) finishes
 * before the outer one reads `ok`.
 */
const corked: { ex?: Exchange; chunk: Buffer | string; chunks: readonly Buffer[]; ok: boolean } = {
  chunk: '',
  chunks: [],
  ok: true,
};

const NO_CHUNKS: readonly Buffer[] = [];

const corkedWrite = () => corked.ex!.writeCorkedChunk();

const corkedWriteAll = () => corked.ex!.writeCorkedChunks();

const corkedEnd = () => corked.ex!.endCorked();
