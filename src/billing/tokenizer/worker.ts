// The tokenizer thread (started by pool.ts): the only place gpt-tokenizer's tables (~66 MB,
// 150 ms to load) are ever loaded, so a process that never counts never holds them, and no
// count, however long, runs on a gateway's event loop. It counts batches of texts (billing's)
// and whole requests from their bytes (count_tokens, request.ts).

import { countTokens } from 'gpt-tokenizer';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { countBounded } from './bounded.js';
import type { CountRefusal, RequestCount, RequestToCount } from './request.js';

/** Special tokens (`<|endoftext|>`…) in a client's text are text, as vendors count them. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const count = (s: string) => countTokens(s, AS_TEXT);

/** A batch of texts to count, or one request's body (request.ts). */
export type TokenizerRequest = { id: number; texts: string[] } | { id: number; request: RequestToCount };
export interface TokenizerAnswer {
  id: number;
  /** A batch's counts, in order. */
  counts?: number[];
  /** A request's count, or the client's mistake in it. */
  counted?: RequestCount;
  refused?: CountRefusal;
  error?: string;
}

// Counting yields the core to the process's event loop (and to other processes' requests): on
// Linux a thread has a nice value of its own, set through its thread id. Elsewhere, or where
// the kernel refuses, the thread runs at the process's priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) setPriority(tid, 10);
} catch {
  // not Linux, or no /proc
}

/** A turn of this thread's loop: the batches that came in meanwhile are answered. */
const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The dialects' parsers, loaded on the first request to count: a thread that only ever counts
 * texts (billing's) never loads them, and from the sources each test gateway's thread would
 * otherwise compile them all.
 */
let requests: Promise<typeof import('./request.js')> | undefined;

async function answerRequest(id: number, request: RequestToCount): Promise<void> {
  let answer: TokenizerAnswer;
  try {
    const { countRequest } = await (requests ??= import('./request.js'));
    const out = await countRequest(request, count, pause);
    answer = 'refused' in out ? { id, refused: out.refused } : { id, counted: out };
  } catch (err) {
    answer = { id, error: (err as Error).message };
  }
  const forward = answer.counted?.forward;
  parentPort!.postMessage(answer, forward ? [forward.buffer as ArrayBuffer] : []);
}

parentPort?.on('message', (msg: TokenizerRequest) => {
  if ('request' in msg) {
    void answerRequest(msg.id, msg.request);
    return;
  }
  const { id, texts } = msg;
  let answer: TokenizerAnswer;
  try {
    answer = { id, counts: texts.map((t) => (t ? countBounded(t, count) : 0)) };
  } catch (err) {
    answer = { id, error: (err as Error).message };
  }
  parentPort!.postMessage(answer);
});
