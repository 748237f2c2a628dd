// A scripted stand-in for the OpenAI and Anthropic APIs, over real HTTP, for the gateway's tests
// (in-process) and the bench (as its own process, see main.ts). What it answers is chosen per
// request, see scenarios.ts; how it looks on the wire is in wire.ts.
//
// The bench pushes 10,000 concurrent paced streams through one instance, so a stream costs a
// few closures, one timer (re-armed with refresh(), never re-created) and one string per delta.

import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import {
  buildPlan,
  countPromptTokens,
  promptText,
  randomId,
  selectScenario,
  type Dialect,
  type Plan,
  type Scenario,
} from './scenarios.js';
import { everyStringTokens } from './billing.js';
import { answerEmbeddings, embeddingsEndpoint } from './embeddings.js';
import { responsesResponse, responsesStream } from './wire-responses.js';
import { geminiError, geminiResponse, geminiStream } from './wire-gemini.js';
import {
  anthropicMessage,
  anthropicStream,
  errorResponse,
  errorResponse as wireError,
  openaiCompletion,
  openaiStream,
  randomRequestId,
  type ErrorResponse,
  type Segment,
  type WireContext,
} from './wire.js';

export { everyStringTokens } from './billing.js';
export { fakeEmbedding, fakeInputTokens, FAKE_DIMENSIONS } from './embeddings.js';
export {
  countPromptTokens,
  parseScenario,
  FAKE_SIGNATURE,
  TEXT_ANSWER,
  TEXT_WORDS,
  THINKING_TEXT,
} from './scenarios.js';
export type { Dialect, ScenarioName } from './scenarios.js';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, without `?` ('' when none). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: any;
  at: number;
  /** The client's port: the same on two requests when they came over one keep-alive connection. */
  remotePort?: number;
}

export interface StreamStats {
  id: number;
  scenario: string;
  bytesWritten: number;
  backpressureEvents: number;
  pausedMs: number;
  /** The script ran to its end (for `drop`, up to the point where it cut the connection). */
  finished: boolean;
  /** The client went away before the script ended. */
  aborted: boolean;
}

export interface FakeUpstream {
  url: string;
  port: number;
  requests: RecordedRequest[];
  streams: StreamStats[];
  reset(): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  port?: number;
  host?: string;
  fixturesDir?: string;
  /** Keep requests and per-stream stats in memory (default true; the bench turns it off). */
  record?: boolean;
  /**
   * How prompt tokens are billed: `prompt` (default) counts prompt text at 4 characters a
   * token, the same in both dialects; `every-string` bills the o200k tokens of every string
   * and key the request carries, as a vendor that reads all of it would (see billing.ts).
   */
  billing?: 'prompt' | 'every-string';
}

/** Counters kept even when `record` is off, so the bench can still see pauses (GET /_stats). */
interface Totals {
  streams: number;
  active: number;
  bytesWritten: number;
  backpressureEvents: number;
  pausedMs: number;
  aborted: number;
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEFAULT_FIXTURES_DIR = path.resolve(REPO_ROOT, 'test/fixtures');
/** Small, odd split size so that replayed events straddle chunk boundaries. */
const REPLAY_CHUNK_BYTES = 37;
/** Deltas written per event-loop turn when unpaced, so one fast stream cannot starve the rest. */
const BURST = 64;

export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const fixturesDir = path.resolve(opts.fixturesDir ?? process.env.FIXTURES_DIR ?? DEFAULT_FIXTURES_DIR);
  const record = opts.record ?? true;
  const host = opts.host ?? '127.0.0.1';
  const requests: RecordedRequest[] = [];
  const streams: StreamStats[] = [];
  const totals: Totals = { streams: 0, active: 0, bytesWritten: 0, backpressureEvents: 0, pausedMs: 0, aborted: 0 };
  const fixtureCache = new Map<string, Buffer>();
  let nextStreamId = 1;

  const server = http.createServer({ keepAlive: true, requestTimeout: 0 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, errorResponse('openai', 500, `fake upstream crashed: ${String(err)}`));
      else res.destroy();
    });
  });
  // Idle keep-alive sockets outlive the client's own idle timeout, so the client is the side
  // that closes them and never sends a request on a socket the server is closing.
  server.keepAliveTimeout = 30_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const raw = await readBody(req);

    if (pathname.startsWith('/_')) return control(method, pathname, res);

    let body: any = raw;
    let malformed = false;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        malformed = true;
      }
    }
    if (record)
      requests.push({
        method,
        path: pathname,
        query: q < 0 ? '' : url.slice(q + 1),
        headers: req.headers,
        body,
        at: Date.now(),
        remotePort: req.socket.remotePort,
      });

    // Embeddings (OpenAI's and Gemini's) have no plan or stream: embeddings.ts answers them.
    const embeddings = embeddingsEndpoint(method, pathname);
    if (embeddings) {
      if (malformed || body === null || typeof body !== 'object' || Array.isArray(body))
        return sendError(res, errorResponse('openai', 400, 'fake upstream: the body is not a JSON object'));
      return answerEmbeddings(embeddings, body, req, res, fixturesDir);
    }

    const gemini = GEMINI_PATH.exec(pathname);
    if (gemini)
      return handleGemini(
        method,
        decodeURIComponent(gemini[1]!),
        gemini[2]!,
        new URLSearchParams(q < 0 ? '' : url.slice(q + 1)),
        body,
        malformed,
        req,
        res,
      );
    const dialect: Dialect = pathname.startsWith('/v1/messages')
      ? 'anthropic'
      : pathname.startsWith('/v1/responses')
        ? 'responses'
        : 'openai';
    const route = `${method} ${pathname}`;
    const known =
      route === 'POST /v1/chat/completions' ||
      route === 'POST /v1/messages' ||
      route === 'POST /v1/messages/count_tokens' ||
      route === 'POST /v1/responses' ||
      route === 'GET /v1/models';
    if (!known) return sendError(res, errorResponse(dialect, 404, `fake upstream: no route ${route}`));
    if (presentsBadKey(req)) return sendError(res, errorResponse(dialect, 401));
    if (route === 'GET /v1/models') return sendJson(res, 200, modelList());
    if (malformed || body === null || typeof body !== 'object' || Array.isArray(body)) {
      const message =
        dialect === 'openai'
          ? "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"
          : 'There was an error parsing the body of your request: expected a JSON object';
      return sendError(res, errorResponse(dialect, 400, message));
    }

    const header = req.headers['x-fake-scenario'];
    const selected = selectScenario(typeof header === 'string' ? header : undefined, body, dialect);
    if ('error' in selected) return sendError(res, errorResponse(dialect, 400, selected.error));

    if (route === 'POST /v1/messages/count_tokens') {
      if (selected.name === 'error') return sendError(res, errorResponse(dialect, errorStatus(selected)));
      return sendJson(res, 200, { input_tokens: countPromptTokens(body, 'anthropic') });
    }
    if (selected.name === 'error')
      return sendError(res, errorResponse(dialect, errorStatus(selected), errorEcho(selected, body, dialect)));
    if (selected.name === 'replay') return replay(selected.arg ?? '', dialect, res);
    const plan = buildPlan({ name: selected.name, arg: selected.arg }, body, dialect);
    if (opts.billing === 'every-string') plan.promptTokens = everyStringTokens(body, dialect);
    return answer(plan, body, dialect, req, res);
  }

  /** `/v1beta/models/{model}:{method}`: the model and streaming are in the URL, the rest as for the others. */
  async function handleGemini(
    method: string,
    model: string,
    call: string,
    query: URLSearchParams,
    body: any,
    malformed: boolean,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const send = (e: ErrorResponse) => sendError(res, e);
    if (method !== 'POST' || !['generateContent', 'streamGenerateContent', 'countTokens'].includes(call))
      return send(geminiError(404, `fake upstream: no route ${method} ${call}`));
    if (presentsBadKey(req) || query.get('key') === 'bad-key') return send(geminiError(401));
    if (malformed || body === null || typeof body !== 'object' || Array.isArray(body))
      return send(geminiError(400, 'Invalid JSON payload received.'));
    // Gemini refuses fields it does not know; `model` and `stream` are in the URL, never the body.
    for (const k of ['model', 'stream'])
      if (k in body)
        return send(geminiError(400, `Invalid JSON payload received. Unknown name "${k}": Cannot find field.`));
    const header = req.headers['x-fake-scenario'];
    const withModel = { ...body, model };
    const selected = selectScenario(typeof header === 'string' ? header : undefined, withModel, 'gemini');
    if ('error' in selected) return send(geminiError(400, selected.error));
    if (call === 'countTokens') return sendJson(res, 200, { totalTokens: countPromptTokens(body, 'gemini') });
    if (selected.name === 'error') return send(geminiError(errorStatus(selected), errorEcho(selected, body, 'gemini')));
    const stream = call === 'streamGenerateContent';
    if (stream && query.get('alt') !== 'sse') return send(geminiError(400, 'fake upstream: streams only with alt=sse'));
    if (selected.name === 'replay') return replay(selected.arg ?? '', 'gemini', res);
    const plan = buildPlan({ name: selected.name, arg: selected.arg }, withModel, 'gemini');
    if (opts.billing === 'every-string') plan.promptTokens = everyStringTokens(body, 'gemini');
    return answer(plan, { ...withModel, stream }, 'gemini', req, res);
  }

  function answer(plan: Plan, body: any, dialect: Dialect, req: IncomingMessage, res: ServerResponse): void {
    const ctx: WireContext = {
      id:
        dialect === 'openai'
          ? randomId('chatcmpl-', 29)
          : dialect === 'responses'
            ? randomId('resp_', 48)
            : dialect === 'gemini'
              ? randomId('', 22)
              : randomId('msg_01', 22),
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'fake-model',
      includeUsage: body.stream_options?.include_usage === true,
    };
    const requestIdHeader = dialect === 'anthropic' ? 'request-id' : 'x-request-id';

    if (body.stream !== true) {
      if (plan.ending === 'drop') {
        req.socket.destroy();
        return;
      }
      if (plan.ending === 'midstream_error') {
        // A whole-body request cannot fail half way; the closest thing is the overload status.
        return sendError(
          res,
          dialect === 'gemini' ? geminiError(503) : errorResponse(dialect, dialect === 'anthropic' ? 529 : 503),
        );
      }
      const send = () => {
        const message =
          dialect === 'openai'
            ? openaiCompletion(plan, ctx)
            : dialect === 'responses'
              ? responsesResponse(plan, ctx, body)
              : dialect === 'gemini'
                ? geminiResponse(plan, ctx)
                : anthropicMessage(plan, ctx);
        sendJson(res, 200, message, { [requestIdHeader]: randomRequestId() });
      };
      // Non-streamed answers arrive when generation is done: after the whole pace.
      later(res, plan.headerDelayMs + plan.intervalMs * plan.outputTokens, send);
      return;
    }

    const segments =
      dialect === 'openai'
        ? openaiStream(plan, ctx)
        : dialect === 'responses'
          ? responsesStream(plan, ctx, body)
          : dialect === 'gemini'
            ? geminiStream(plan, ctx)
            : anthropicStream(plan, ctx);
    later(res, plan.headerDelayMs, () => {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        [requestIdHeader]: randomRequestId(),
      });
      startStream(res, plan.scenario, segments, plan.intervalMs, BURST, plan.ending === 'drop');
    });
  }

  function startStream(
    res: ServerResponse,
    scenario: string,
    segments: Segment[],
    intervalMs: number,
    burst: number,
    drop: boolean,
  ): void {
    const stats: StreamStats = {
      id: nextStreamId++,
      scenario,
      bytesWritten: 0,
      backpressureEvents: 0,
      pausedMs: 0,
      finished: false,
      aborted: false,
    };
    if (record) streams.push(stats);
    totals.streams++;
    totals.active++;
    new StreamJob(res, segments, intervalMs, burst, drop, stats, totals).start();
  }

  async function replay(rel: string, dialect: Dialect, res: ServerResponse): Promise<void> {
    const file = path.resolve(fixturesDir, rel);
    const errorResponse = (d: Dialect, status: number, message?: string) =>
      d === 'gemini' ? geminiError(status, message) : wireError(d, status, message);
    if (rel === '' || !file.startsWith(fixturesDir + path.sep)) {
      return sendError(res, errorResponse(dialect, 400, `fake upstream: bad replay path ${JSON.stringify(rel)}`));
    }
    let bytes = fixtureCache.get(file);
    if (!bytes) {
      try {
        bytes = await readFile(file);
      } catch {
        return sendError(res, errorResponse(dialect, 404, `fake upstream: no fixture ${rel}`));
      }
      fixtureCache.set(file, bytes);
    }
    if (res.destroyed) return;
    if (file.endsWith('.sse')) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      const whole = bytes;
      const run = {
        count: Math.ceil(whole.length / REPLAY_CHUNK_BYTES),
        frame: (i: number) => whole.subarray(i * REPLAY_CHUNK_BYTES, (i + 1) * REPLAY_CHUNK_BYTES),
      };
      // One chunk per event-loop turn, so the pieces leave as separate writes, not one packet.
      startStream(res, 'replay', [run], 0, 1, false);
      return;
    }
    const status = Number(/(?:^|[\\/])errors[\\/](\d{3})_[^\\/]*$/.exec(rel)?.[1] ?? 200);
    const headers: Record<string, string> = {
      'content-type': file.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8',
    };
    if (status === 429) headers['retry-after'] = '1';
    if (status >= 400 && rel.startsWith('anthropic')) {
      headers['x-should-retry'] = String(status === 429 || status >= 500);
      headers['request-id'] = randomRequestId();
    }
    res.writeHead(status, { ...headers, 'content-length': String(bytes.length) });
    res.end(bytes);
  }

  function control(method: string, pathname: string, res: ServerResponse): void {
    const route = `${method} ${pathname}`;
    if (route === 'GET /_requests') return sendJson(res, 200, requests);
    if (route === 'GET /_streams') return sendJson(res, 200, streams);
    if (route === 'GET /_stats') return sendJson(res, 200, { ...totals, requests: requests.length });
    if (route === 'POST /_reset') {
      reset();
      return sendJson(res, 200, { ok: true });
    }
    sendJson(res, 404, { error: `no control route ${route}` });
  }

  function reset(): void {
    // In place: tests hold references to these arrays.
    requests.length = 0;
    streams.length = 0;
    totals.streams = totals.active;
    totals.bytesWritten = 0;
    totals.backpressureEvents = 0;
    totals.pausedMs = 0;
    totals.aborted = 0;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept queue: the bench opens thousands of connections at once.
    server.listen({ port: opts.port ?? 0, host, backlog: 8192 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake upstream: no TCP address');
  const port = address.port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    requests,
    streams,
    reset,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Streams and idle keep-alive sockets would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

/**
 * Writes a stream's segments: unpaced ones at once, run deltas one per `intervalMs` tick (or as
 * fast as the socket takes them when 0). When the socket's buffer is full, production stops
 * until 'drain' and the wait is counted, which is what the gateway's backpressure tests read.
 */
class StreamJob {
  private seg = 0;
  private pos = 0;
  private due = false;
  private done = false;
  private pausedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly pumpFn = (): void => this.pump();
  private readonly onTick = (): void => {
    this.due = true;
    this.pump();
  };
  private readonly onDrain = (): void => {
    this.resume();
    this.pump();
  };
  private readonly onClose = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.res.off('drain', this.onDrain);
    this.resume();
    if (this.done) return;
    this.done = true;
    this.stats.aborted = true;
    this.totals.aborted++;
    this.totals.active--;
  };

  constructor(
    private readonly res: ServerResponse,
    private readonly segments: Segment[],
    private readonly intervalMs: number,
    private readonly burst: number,
    private readonly drop: boolean,
    private readonly stats: StreamStats,
    private readonly totals: Totals,
  ) {}

  start(): void {
    this.res.on('close', this.onClose);
    this.pump();
  }

  private current(): Segment | undefined {
    while (this.seg < this.segments.length) {
      const s = this.segments[this.seg]!;
      if (typeof s === 'string' || Buffer.isBuffer(s) || this.pos < s.count) return s;
      this.seg++;
      this.pos = 0;
    }
    return undefined;
  }

  private pump(): void {
    if (this.done) return;
    let budget = this.burst;
    for (;;) {
      const s = this.current();
      if (s === undefined) return this.finish();
      let frame: string | Buffer;
      if (typeof s === 'string' || Buffer.isBuffer(s)) {
        frame = s;
        this.seg++;
      } else {
        if (this.intervalMs > 0) {
          if (!this.due) return this.arm();
          this.due = false;
        }
        frame = s.frame(this.pos++);
      }
      const bytes = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
      this.stats.bytesWritten += bytes;
      this.totals.bytesWritten += bytes;
      if (!this.res.write(frame)) {
        this.stats.backpressureEvents++;
        this.totals.backpressureEvents++;
        this.pausedAt = performance.now();
        this.res.once('drain', this.onDrain);
        return;
      }
      if (--budget === 0) {
        setImmediate(this.pumpFn);
        return;
      }
    }
  }

  private arm(): void {
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.onTick, this.intervalMs);
  }

  private resume(): void {
    if (this.pausedAt === 0) return;
    const ms = performance.now() - this.pausedAt;
    this.pausedAt = 0;
    this.stats.pausedMs += ms;
    this.totals.pausedMs += ms;
  }

  private finish(): void {
    this.done = true;
    this.stats.finished = true;
    this.totals.active--;
    if (!this.drop) {
      this.res.end();
      return;
    }
    // Flush what was written, then cut the connection with no chunked terminator: the client
    // sees the deltas followed by a premature close, as when a vendor's connection dies.
    const socket = this.res.socket;
    if (!socket) return;
    socket.end(() => socket.destroy());
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      data += chunk;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/** Gemini's `/v1beta/models/{model}:{method}`; the model may hold slashes. */
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/(.+):([A-Za-z]+)$/;

function presentsBadKey(req: IncomingMessage): boolean {
  const candidates = [req.headers['x-api-key'], req.headers.authorization, req.headers['x-goog-api-key']];
  return candidates.some((v) => typeof v === 'string' && v.replace(/^Bearer\s+/i, '').trim() === 'bad-key');
}

function errorStatus(s: Scenario): number {
  const n = Number(s.arg?.split(':')[0]);
  return Number.isInteger(n) && n >= 400 && n <= 599 ? n : 500;
}

/** `error:STATUS:echo`: the error message is the prompt text, as vendors quote what they refuse. */
function errorEcho(s: Scenario, body: unknown, dialect: Dialect): string | undefined {
  return s.arg?.split(':')[1] === 'echo' ? promptText(body, dialect) : undefined;
}

/** Waits on a timer that dies with the connection, so an aborted request leaves nothing behind. */
function later(res: ServerResponse, ms: number, fn: () => void): void {
  if (ms <= 0) return fn();
  const timer = setTimeout(() => {
    if (!res.destroyed) fn();
  }, ms);
  res.once('close', () => clearTimeout(timer));
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

function sendError(res: ServerResponse, err: ErrorResponse): void {
  // Node knows no reason phrase for Anthropic's 529 and would send "unknown".
  if (err.status === 529) res.statusMessage = 'Overloaded';
  res.writeHead(err.status, { ...err.headers, 'content-length': String(Buffer.byteLength(err.body)) });
  res.end(err.body);
}

function modelList(): object {
  // Both vendors' list shapes at once, like the gateway's own catalogue.
  const models = ['fake-gpt', 'fake-claude', 'text', 'tools', 'parallel_tools', 'thinking', 'cached', 'echo'];
  const data = models.map((id) => ({
    id,
    object: 'model',
    type: 'model',
    display_name: id,
    created: 1_700_000_000,
    created_at: '2023-11-14T22:13:20Z',
    owned_by: 'fake-upstream',
  }));
  return { object: 'list', data, has_more: false, first_id: data[0]!.id, last_id: data[data.length - 1]!.id };
}
