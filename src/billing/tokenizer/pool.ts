// Counting off the event loop. All counting runs on one worker thread per process (worker.ts),
// started on the first count: loading the tables alone holds a thread for 150 ms, so no count
// is done inline, however small; instead the counts asked for in one turn of the loop go over
// in one message, so a body of a thousand short strings costs one round trip (~0.1 ms), not a
// thousand. Long texts are cut into chunks queued one by one, and short jobs go ahead of
// chunks, so a 15 MB count never keeps a 10-character one waiting more than one chunk's time.
//
// Bounded on every side: the time of one text is linear (bounded.ts); what may wait is bounded
// by characters (past it, an answer at once: the UTF-8 length, an upper bound, since every
// o200k token is at least one byte); a batch that takes far longer than its size allows gets
// the thread terminated and its counts answered by the same upper bound.

import { Worker } from 'node:worker_threads';
import { GatewayError } from '../../errors.js';
import { chunks } from './bounded.js';
import type { RequestCount, RequestToCount } from './request.js';
import type { TokenizerAnswer, TokenizerRequest } from './worker.js';

/** Most characters one count_tokens request may ask to count (past it, refused: 413). */
export const MAX_COUNT_CHARS = 4 * 1024 * 1024;
/** Characters allowed to wait for the thread; past it, counts answer the byte upper bound. */
export const MAX_QUEUED_CHARS = 64 * 1024 * 1024;
/** Past this backlog, refusable counts (count_tokens) are refused, keeping room for billing's. */
export const ADMIT_QUEUED_CHARS = MAX_QUEUED_CHARS / 4;
/** A batch is sent when it reaches this size (or nothing more is waiting). */
const BATCH_CHARS = 256 * 1024;
/**
 * Counting runs at 0.1–1 µs a character, adversarial text (bounded.ts) at about 2; past 30 s plus
 * 100 µs a character of wall time the thread is taken to be stuck. The thread runs at nice 10, so
 * a machine busy with other work starves it for many times its CPU time: a tighter guard (10 s
 * plus 10 µs) fired on two cores running four test files at once, and answered counts that were
 * merely slow with the upper bound.
 */
const batchTimeoutMs = (chars: number) => 30_000 + chars / 10;

export type RefusalReason = 'too_large' | 'busy';
/** A refusable count that was refused: too many characters, or too long a backlog. */
export class TokenizerRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'TokenizerRefused';
  }
}

/** Tokens `text` cannot exceed: one per UTF-8 byte. */
export const upperBoundTokens = (text: string): number => Buffer.byteLength(text);

// Set by build/server.ts to the bundle's worker entry, beside the chunk this code is in.
declare const AIROUTER_TOKENIZER_WORKER: string | undefined;

interface Job {
  text: string;
  resolve: (n: number) => void;
}

let worker: Worker | undefined;
let nextId = 1;
/** Short jobs, sent first, and chunks of long texts. */
const small: Job[] = [];
const large: Job[] = [];
let queuedChars = 0;
let inflight: { id: number; jobs: Job[]; timer: NodeJS.Timeout } | undefined;
let flushScheduled = false;
let onError: (err: Error) => void = () => {};
/** Requests being counted (countRequestBody), which the thread takes beside the batches, and their bytes. */
interface RequestJob {
  bytes: number;
  timer: NodeJS.Timeout;
  resolve: (c: RequestCount) => void;
  reject: (err: Error) => void;
}
const requests = new Map<number, RequestJob>();
let requestBytes = 0;

/** Where failures of the thread are reported (the gateway's logger); they never reject a count. */
export function onTokenizerError(report: (err: Error) => void): void {
  onError = report;
}

function workerUrl(): URL {
  return typeof AIROUTER_TOKENIZER_WORKER === 'string'
    ? new URL(AIROUTER_TOKENIZER_WORKER, import.meta.url)
    : new URL('./worker.ts', import.meta.url);
}

/**
 * From the sources the thread needs tsx's loader, and Node 20 gives a worker neither the hooks
 * `node src/bin.js` registers in code nor those of an inherited `--import tsx` (checked: both
 * fail on the .ts entry), so the thread registers it itself before importing its entry. It
 * inherits execArgv all the same (memory flags such as --max-semi-space-size).
 */
function startWorker(): Worker {
  const url = workerUrl();
  const w = url.pathname.endsWith('.ts')
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`,
        { eval: true, name: 'tokenizer' },
      )
    : new Worker(url, { name: 'tokenizer' });
  // An idle tokenizer must not keep a process alive that has nothing else to do.
  w.unref();
  w.on('message', (answer: TokenizerAnswer) => finish(answer));
  w.on('error', (err) => {
    onError(err);
    drop(w);
  });
  w.on('exit', () => drop(w));
  return w;
}

/** The thread is gone: what it had is answered by the upper bound, the next count starts another. */
function drop(w: Worker) {
  if (worker !== w) return;
  worker = undefined;
  const lost = inflight;
  inflight = undefined;
  if (lost) {
    clearTimeout(lost.timer);
    for (const j of lost.jobs) j.resolve(upperBoundTokens(j.text));
  }
  // A request's count has no upper bound worth answering (handleCountTokens): it is refused.
  for (const [id, r] of requests)
    settleRequest(id, r, () => r.reject(new TokenizerRefused('busy', 'The token counter restarted; retry shortly.')));
  schedule();
}

function finish(answer: TokenizerAnswer) {
  const r = requests.get(answer.id);
  if (r) {
    settleRequest(answer.id, r, () => {
      if (answer.counted) r.resolve(answer.counted);
      else if (answer.refused)
        r.reject(
          new GatewayError(answer.refused.kind, answer.refused.message, {
            param: answer.refused.param,
            code: answer.refused.code,
          }),
        );
      else {
        onError(new Error(`tokenizer: ${answer.error}`));
        r.reject(new TokenizerRefused('busy', 'The token counter failed; retry shortly.'));
      }
    });
    return;
  }
  const { id, counts, error } = answer;
  if (!inflight || inflight.id !== id) return;
  const { jobs, timer } = inflight;
  inflight = undefined;
  clearTimeout(timer);
  if (error) onError(new Error(`tokenizer: ${error}`));
  jobs.forEach((j, i) => j.resolve(counts?.[i] ?? upperBoundTokens(j.text)));
  idle();
  schedule();
}

/** Nothing awaited of the thread: it no longer keeps the process alive. */
function idle() {
  if (!inflight && requests.size === 0) worker?.unref();
}

function settleRequest(id: number, r: RequestJob, settle: () => void) {
  requests.delete(id);
  requestBytes -= r.bytes;
  clearTimeout(r.timer);
  settle();
  idle();
}

function schedule() {
  if (flushScheduled || inflight || (small.length === 0 && large.length === 0)) return;
  flushScheduled = true;
  // After the current turn, so that the counts it asks for go in one message.
  setImmediate(send);
}

function send() {
  flushScheduled = false;
  if (inflight || (small.length === 0 && large.length === 0)) return;
  const jobs: Job[] = [];
  let chars = 0;
  while (chars < BATCH_CHARS && (small.length || large.length)) {
    const j = (small.length ? small : large).shift()!;
    jobs.push(j);
    chars += j.text.length;
  }
  queuedChars -= chars;
  const w = (worker ??= startWorker());
  const id = nextId++;
  inflight = { id, jobs, timer: watch(w, chars, `a batch of ${chars} characters`) };
  w.postMessage({ id, texts: jobs.map((j) => j.text) } satisfies TokenizerRequest);
}

/** Held while counts are awaited (a pending promise alone does not keep a process alive), and timed. */
function watch(w: Worker, chars: number, what: string): NodeJS.Timeout {
  w.ref();
  const timer = setTimeout(() => {
    onError(new Error(`tokenizer: ${what} took more than ${batchTimeoutMs(chars)} ms; thread restarted`));
    void w.terminate();
    drop(w);
  }, batchTimeoutMs(chars));
  timer.unref();
  return timer;
}

function enqueue(text: string): Promise<number> {
  return new Promise((resolve) => {
    const parts = chunks(text);
    if (parts.length === 1) {
      (text.length <= 4096 ? small : large).push({ text, resolve });
    } else {
      let left = parts.length;
      let sum = 0;
      for (const p of parts) {
        large.push({
          text: p,
          resolve: (n) => {
            sum += n;
            if (--left === 0) resolve(sum);
          },
        });
      }
    }
    queuedChars += text.length;
    schedule();
  });
}

/**
 * o200k tokens of `text`, counted off the event loop in time linear in its length; close to
 * gpt-tokenizer's own count (the same for text without 256-character runs, a little above for
 * such runs). Never rejects: when the backlog is full, or the thread fails, the UTF-8 length.
 */
export async function countTokens(text: string): Promise<number> {
  if (!text) return 0;
  if (queuedChars + text.length > MAX_QUEUED_CHARS) return upperBoundTokens(text);
  return enqueue(text);
}

/**
 * The input tokens and model of a request, from its body's bytes, all of it done in the thread
 * (request.ts). Rejects with a GatewayError for the client's mistakes (400, 413 past
 * MAX_COUNT_CHARS), and with TokenizerRefused('busy') when the backlog passes ADMIT_QUEUED_CHARS
 * (bytes stand for characters: a character is at least one byte) or the thread fails. The
 * body's buffer is handed over when it is a whole one of its own: the caller must not read it
 * after.
 */
export function countRequestBody(req: Omit<RequestToCount, 'maxChars'>): Promise<RequestCount> {
  const bytes = req.body.byteLength;
  if (queuedChars + requestBytes + bytes > ADMIT_QUEUED_CHARS)
    return Promise.reject(new TokenizerRefused('busy', 'The token counter is busy; retry shortly.'));
  const w = (worker ??= startWorker());
  const id = nextId++;
  return new Promise((resolve, reject) => {
    requests.set(id, { bytes, resolve, reject, timer: watch(w, bytes, `a request of ${bytes} bytes`) });
    requestBytes += bytes;
    const { buffer, byteOffset, byteLength } = req.body;
    // A small body is a slice of Node's shared pool, which must not be taken from this thread.
    const own = byteOffset === 0 && byteLength === buffer.byteLength && buffer instanceof ArrayBuffer;
    w.postMessage(
      { id, request: { ...req, maxChars: MAX_COUNT_CHARS } } satisfies TokenizerRequest,
      own ? [buffer] : [],
    );
  });
}

/** For tests and metrics: whether the thread runs, and the characters waiting for it. */
export function tokenizerState(): { running: boolean; queuedChars: number; requestBytes: number; threadId?: number } {
  return { running: worker !== undefined, queuedChars, requestBytes, threadId: worker?.threadId };
}

/** Stops the thread (tests; a process that exits does not need it). */
export async function stopTokenizer(): Promise<void> {
  const w = worker;
  if (w) {
    await w.terminate();
    drop(w);
  }
}
