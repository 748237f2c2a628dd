// A request that did not come as an HTTP request of its own (a WebSocket message, the call
// POST /v1/responses/compact makes), and its answer, as uWS's request and response for the
// router (Router.serve): the same handler, limits, holds, charges, metrics and shutdown wait as
// the request sent over HTTP, with nothing of the request path written twice.
// An answer streamed as server-sent events leaves as one text message per event (its `data`);
// any other answer (an error before the stream began) goes to `answered`. Backpressure is the
// socket's: a write that could not be sent at once reports a full socket, and `drained()`
// (the socket's drain event) wakes the writer, as uWS's onWritable does for HTTP.

import type { HttpRequest, HttpResponse } from './uws.js';

/** Where the answer goes: the connection the request came on, or the caller. */
export interface InnerAnswer {
  /** Sends one text message; true when it went out at once (false: wait for drained()). */
  send(text: string): boolean;
  /** An answer that was not an event stream: its status, headers and body. */
  answered(status: number, headers: Record<string, string>, body: string): void;
  /** The answer is over (ended, or dropped with close()). */
  ended(): void;
  /** Drops the connection (a stream that cannot be completed). */
  close(): void;
  cork(cb: () => void): void;
  remoteAddress(): ArrayBuffer;
}

export interface InnerRequest {
  req: HttpRequest;
  res: HttpResponse;
  /** The connection (or the caller's client) went away: the request is aborted, as a client that hangs up. */
  abort(): void;
  /** The socket has room again. */
  drained(): void;
}

const statusOf = (line: string) => Number.parseInt(line, 10) || 200;

/** Headers of the request that carried this one that it carries too: not a connection's own, nor a request id (it has its own). */
const NOT_CARRIED = new Set([
  'upgrade',
  'connection',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'x-request-id',
  'content-length',
  'transfer-encoding',
  'host',
]);

export function carriedHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) if (!NOT_CARRIED.has(k)) out[k] = headers[k]!;
  return out;
}

/** The request `body` to `method` `url` with `headers` (lower-case names), answered to `answer`. */
export function innerRequest(
  answer: InnerAnswer,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: Buffer,
): InnerRequest {
  const sent: Record<string, string> = { ...headers, 'content-length': String(body.length) };
  let onAborted: (() => void) | undefined;
  let onWritable: (() => boolean) | undefined;
  let status = 200;
  const answerHeaders: Record<string, string> = {};
  let streaming: boolean | undefined;
  /** A stream's text not yet sent: an event is sent once its blank line has come. */
  let pending = '';
  let plain = '';
  let over = false;

  /** Sends each whole event in `pending`; false when the socket is full. */
  const flush = (): boolean => {
    let ok = true;
    let at: number;
    while ((at = pending.indexOf('\n\n')) !== -1) {
      const frame = pending.slice(0, at);
      pending = pending.slice(at + 2);
      let data = '';
      for (const line of frame.split('\n')) {
        // `event:` names repeat the data's own `type`; comments (`: ping`) are not events.
        if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line[5] === ' ' ? 6 : 5);
      }
      if (data) ok = answer.send(data) && ok;
    }
    return ok;
  };

  const take = (chunk: string | Buffer | ArrayBuffer | undefined): boolean => {
    if (chunk === undefined) return true;
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as ArrayBuffer).toString('utf8');
    streaming ??= /^text\/event-stream/.test(answerHeaders['content-type'] ?? '');
    if (!streaming) {
      plain += text;
      return true;
    }
    pending += text;
    return flush();
  };

  const finish = () => {
    if (over) return;
    over = true;
    if (!streaming) answer.answered(status, answerHeaders, plain);
    else if (pending) {
      pending += '\n\n';
      flush();
    }
    answer.ended();
  };

  const req = {
    getCaseSensitiveMethod: () => method,
    getMethod: () => method.toLowerCase(),
    getUrl: () => url,
    getQuery: () => '',
    getParameter: () => undefined,
    getHeader: (name: string) => sent[name] ?? '',
    forEach: (cb: (k: string, v: string) => void) => {
      for (const k in sent) cb(k, sent[k]!);
    },
    setYield: () => req,
  };

  const res = {
    onAborted(cb: () => void) {
      onAborted = cb;
      return res;
    },
    onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void) {
      // After the handler's synchronous part, as uWS delivers a body that came with its head.
      setImmediate(() => {
        if (!over) cb(body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer, true);
      });
      return res;
    },
    pause: () => res,
    resume: () => res,
    cork(cb: () => void) {
      answer.cork(cb);
      return res;
    },
    writeStatus(line: string) {
      status = statusOf(line);
      return res;
    },
    writeHeader(k: string, v: string) {
      answerHeaders[k.toLowerCase()] = String(v);
      return res;
    },
    write: (chunk: string | Buffer) => take(chunk),
    end(chunk?: string | Buffer) {
      take(chunk);
      finish();
      return res;
    },
    endWithoutBody() {
      finish();
      return res;
    },
    onWritable(cb: () => boolean) {
      onWritable = cb;
      return res;
    },
    close() {
      if (!over) {
        over = true;
        answer.close();
        answer.ended();
      }
      return res;
    },
    getRemoteAddressAsText: () => answer.remoteAddress(),
  };

  return {
    req: req as unknown as HttpRequest,
    res: res as unknown as HttpResponse,
    abort() {
      if (over) return;
      over = true;
      onAborted?.();
      answer.ended();
    },
    drained() {
      const cb = onWritable;
      onWritable = undefined;
      cb?.();
    },
  };
}
