// The tokenizer thread (started by pool.ts): the only place gpt-tokenizer's tables (~66 MB,
// 150 ms to load) are ever loaded, so a process that never counts never holds them, and no
// count, however long, runs on a gateway's event loop.

import { countTokens } from 'gpt-tokenizer';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { countBounded } from './bounded.js';

/** Special tokens (`<|endoftext|>`…) in a client's text are text, as vendors count them. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const count = (s: string) => countTokens(s, AS_TEXT);

export interface TokenizerRequest {
  id: number;
  texts: string[];
}
export interface TokenizerAnswer {
  id: number;
  counts?: number[];
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

parentPort?.on('message', ({ id, texts }: TokenizerRequest) => {
  let answer: TokenizerAnswer;
  try {
    answer = { id, counts: texts.map((t) => (t ? countBounded(t, count) : 0)) };
  } catch (err) {
    answer = { id, error: (err as Error).message };
  }
  parentPort!.postMessage(answer);
});
