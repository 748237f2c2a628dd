// The request half of an HTTP exchange on uWS (./exchange.ts adds the answer). uWS hands out
// `req` only for the synchronous part of a handler, so everything a handler needs of it is read
// here up front; the body arrives later, through `res`.

import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { TrustedProxies } from './client-address.js';
import type { HttpRequest, HttpResponse } from './uws.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const NO_HEADERS: Record<string, string> = Object.freeze({});

const NO_LISTENERS: readonly (() => void)[] = Object.freeze([]);
/** What of a request body still on its way an early answer reads through rather than cut. */
const UNREAD_BODY_KEPT = 64 * 1024;

// Request ids need to be unique, not secret: a per-process random prefix and a counter cost
// nothing per request, where 12 random bytes each showed up in profiles.
const ID_PREFIX = randomBytes(6).toString('hex');
let idSeq = 0;

/**
 * A malformed %-escape (`/v1/models/%E0%A4%A`) is kept as sent: the handler then finds no such
 * thing. Throwing here would leave uWS with an unanswered request, and it aborts the process.
 */
function decodeParam(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export class ExchangeRequest {
  readonly method: string;
  readonly path: string;
  /** The query string as sent (no `?`, percent-escapes and all): same-dialect routes forward it. */
  readonly rawQuery: string;
  private parsedQuery?: URLSearchParams;
  /** The request's headers, names in lower case; a stream drops them once begun (releaseHeaders). */
  headers: Record<string, string> = {};
  readonly params: string[] = [];
  readonly requestId: string;
  private peer?: string;
  private address?: string;
  /** Every X-Forwarded-For header, joined; kept only when some proxy is trusted. */
  private forwardedFor?: string;
  /**
   * Set when the request cannot be framed safely (Content-Length headers that disagree): the
   * router answers it with this error instead of running the handler, and the connection is
   * closed after the answer, since where this request's body ends is anybody's guess.
   */
  framingError?: GatewayError;
  /** HEAD: the answer's status and headers as GET would have them, and no body bytes. */
  readonly head: boolean;
  readonly startedAt = performance.now();
  aborted = false;
  /**
   * Set by the answer (./exchange.ts) once it is complete, or the connection dropped: what still
   * arrives of the body is not kept.
   */
  finished = false;
  /**
   * Replaced on every change, never pushed to: an array pushed to grows to seventeen slots (some
   * 150 bytes), which every open stream held for the one listener it keeps.
   */
  private abortListeners: readonly (() => void)[] = NO_LISTENERS;
  /** Body bytes received so far, and whether the last of them has come. */
  private bodyReceived = 0;
  private bodyDone = false;
  private bodyPaused = false;

  constructor(
    protected readonly res: HttpResponse,
    req: HttpRequest,
    paramCount: number,
    private readonly proxies?: TrustedProxies,
  ) {
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.head = this.method === 'HEAD';
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    // forEach sees every header line; getHeader would only show the first of a repeated one.
    let length: string | undefined;
    req.forEach((k, v) => {
      if (k === 'content-length') {
        // The same value twice is one length (RFC 9112 §6.3); uWS itself drops a connection
        // whose Content-Length is a list ("5, 5"), so each value here is a single number.
        if (length === undefined) length = v;
        else if (v !== length) this.framingError = conflictingLength();
      } else if (k === 'x-forwarded-for' && this.headers[k] !== undefined) {
        // Repeated X-Forwarded-For lines are one list (RFC 9110 §5.3).
        this.headers[k] += `, ${v}`;
        return;
      }
      this.headers[k] = v;
    });
    if (proxies) this.forwardedFor = this.headers['x-forwarded-for'];
    for (let i = 0; i < paramCount; i++) this.params.push(decodeParam(req.getParameter(i) ?? ''));
    const given = this.headers['x-request-id'];
    this.requestId = given && REQUEST_ID.test(given) ? given : `req_${ID_PREFIX}${(++idSeq).toString(36)}`;
    res.onAborted(() => {
      this.aborted = true;
      const listeners = this.abortListeners;
      this.abortListeners = NO_LISTENERS;
      for (const l of listeners) l();
    });
  }

  // Parsed on first use: inference requests never look at either.
  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }

  /** The TCP peer: the client, or the proxy in front of it. */
  get peerAddress(): string {
    if (this.peer === undefined)
      this.peer = this.aborted ? '' : Buffer.from(this.res.getRemoteAddressAsText()).toString();
    return this.peer;
  }

  /**
   * The client: the peer, or behind a trusted proxy (TRUST_PROXY) the address it forwarded for.
   * What limits, logs and records name a request by.
   */
  get remoteAddress(): string {
    if (this.address === undefined)
      this.address = this.proxies ? this.proxies.client(this.peerAddress, this.forwardedFor) : this.peerAddress;
    return this.address;
  }

  /**
   * Calls `listener` if the client goes away. The returned function takes it back: a listener
   * left behind keeps its closure's scope alive for as long as the response lasts.
   */
  onAbort(listener: () => void): () => void {
    if (this.aborted) {
      listener();
      return () => {};
    }
    this.abortListeners = this.abortListeners.concat([listener]);
    return () => {
      const i = this.abortListeners.indexOf(listener);
      if (i !== -1) this.abortListeners = this.abortListeners.toSpliced(i, 1);
    };
  }

  /** The body, refused with 413 past `limit` bytes (by content-length up front, or as it arrives). */
  readBody(limit: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const declared = Number(this.headers['content-length']);
      if (declared > limit) {
        reject(tooLarge(limit));
        return;
      }
      // With a declared length, the chunks are copied straight into one buffer of that size: no
      // second copy to join them (15 MB joined took 45 ms of the event loop at a stretch).
      let whole: Buffer | undefined = declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
      let chunks: Buffer[] = [];
      let size = 0;
      let failed = false;
      // Once the body is in, neither the abort listener nor the data callback may keep it: both
      // share this scope, and a stream's response outlives its request body by minutes.
      const forget = this.onAbort(() => reject(new GatewayError('invalid_request', 'The client went away.')));
      this.res.onData((chunk, isLast) => {
        this.bodyReceived += chunk.byteLength;
        if (isLast) this.bodyDone = true;
        // Once answered (a refusal before the body was needed), the rest is not kept.
        if (failed || this.finished) return;
        size += chunk.byteLength;
        if (size > limit) {
          failed = true;
          chunks = [];
          whole = undefined;
          forget();
          reject(tooLarge(limit));
          return;
        }
        // uWS reuses the memory behind `chunk` once this callback returns.
        if (whole && size <= whole.length) whole.set(new Uint8Array(chunk), size - chunk.byteLength);
        else chunks.push(Buffer.from(new Uint8Array(chunk)));
        if (isLast) {
          let body: Buffer;
          if (whole && size === whole.length) body = whole;
          else {
            // Fewer bytes than declared (uWS would not pass more): what came, in the buffer.
            if (whole) chunks.unshift(whole.subarray(0, Math.min(size, whole.length)));
            body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
          }
          chunks = [];
          whole = undefined;
          forget();
          resolve(body);
        }
      });
    });
  }

  /**
   * Stops reading the body from the socket until resumeBody(): the cheap checks (the key, its
   * balance, its share) decide first whether the rest is wanted. A request refused meanwhile
   * costs its first chunk, not the megabytes behind it.
   */
  pauseBody(): void {
    if (this.bodyDone || this.bodyPaused || this.aborted || this.finished) return;
    this.bodyPaused = true;
    this.res.pause();
  }

  resumeBody(): void {
    if (!this.bodyPaused || this.aborted || this.finished) return;
    this.bodyPaused = false;
    this.res.resume();
  }

  /**
   * Whether much of the request's body has yet to arrive. An answer given before then (a
   * refusal that needed no body) closes the connection, as nginx does: the client stops
   * sending megabytes nobody reads, and gets the answer all the same.
   */
  protected get bodyLeft(): boolean {
    if (this.bodyDone) return false;
    const declared = Number(this.headers['content-length'] ?? 0);
    if (declared > 0) return declared - this.bodyReceived > UNREAD_BODY_KEPT;
    return this.headers['transfer-encoding'] !== undefined;
  }

  /**
   * Lets go of the request's headers once nothing will read them: a streamed answer whose
   * status is out. An SDK sends a dozen or more, and a stream lasts minutes.
   */
  releaseHeaders(): void {
    this.headers = NO_HEADERS;
  }
}

function conflictingLength() {
  return new GatewayError(
    'invalid_request',
    'The request has Content-Length headers that disagree; its body cannot be told from what follows it.',
    { code: 'conflicting_content_length' },
  );
}

function tooLarge(limit: number) {
  return new GatewayError('too_large', `Request body is larger than the ${limit}-byte limit.`, {
    code: 'request_too_large',
  });
}
