// The tokenizer thread (started by pool.ts): the only place gpt-tokenizer's tables (~66 MB,
// 150 ms to load) are ever loaded, so a process that never counts never holds them, and no
// count, however long, runs on a gateway's event loop.

import { countTokens } from 'gpt-tokenizer';
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

parentPort?.on('message', ({ id, texts }: TokenizerRequest) => {
  let answer: TokenizerAnswer;
  try {
    answer = { id, counts: texts.map((t) => (t ? countBounded(t, count) : 0)) };
  } catch (err) {
    answer = { id, error: (err as Error).message };
  }
  parentPort!.postMessage(answer);
});
