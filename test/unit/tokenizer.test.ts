// The bounded tokenizer (src/billing/tokenizer/): the same count as gpt-tokenizer for ordinary
// text, close above it for long runs, linear time on runs that take gpt-tokenizer seconds to
// minutes, off the event loop, and bounded on what may wait.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { countTokens as libCount } from 'gpt-tokenizer';
import { countTokens } from '../../src/billing/tokens.js';
import { countBounded, MAX_PIECE } from '../../src/billing/tokenizer/bounded.js';
import { childEnv, REPO_ROOT } from '../helpers/child.js';
import {
  countRequestBody,
  MAX_COUNT_CHARS,
  MAX_QUEUED_CHARS,
  stopTokenizer,
  tokenizerState,
  TokenizerRefused,
} from '../../src/billing/tokenizer/pool.js';
import { GatewayError } from '../../src/errors.js';

t.teardown(() => stopTokenizer());

const lib = (s: string) => libCount(s, { disallowedSpecial: new Set() });

/** Prose of many languages, code and numbers, as a prompt has them. */
function ordinary(chars: number): string {
  const parts = [
    'The quick brown fox jumps over the lazy dog.',
    'Il était une fois, dans un pays lointain,',
    'Übergrößenträger müssen draußen bleiben;',
    '東京は日本の首都です。',
    'Привет, как дела?',
    'function add(a: number, b: number) { return a + b; }',
    '\n\n',
    '  - item 1234567 costs $19.99',
    "It's what we'll do, isn't it?",
    'https://example.com/path?q=1&r=two',
    '🙂 👍🏽',
    '\t\tindented();',
  ];
  let s = '';
  for (let i = 0; s.length < chars; i++) s += parts[(i * 7) % parts.length] + (i % 5 ? ' ' : '\n');
  return s.slice(0, chars);
}

/** Random lowercase letters: one long word whose merges differ everywhere. */
function randomWord(chars: number): string {
  let x = 12345;
  let s = '';
  while (s.length < chars) {
    x = (x * 48271) % 2147483647;
    s += String.fromCharCode(97 + (x % 26));
  }
  return s;
}

t.test("ordinary text: exactly gpt-tokenizer's count", async (t) => {
  for (const n of [10, 1_000, 50_000]) {
    const text = ordinary(n);
    t.equal(countBounded(text, lib), lib(text), `${n} characters, counted directly`);
    t.equal(await countTokens(text), lib(text), `${n} characters, through the tokenizer thread`);
  }
  // Past one chunk the thread gets the text in pieces cut after a space: within a token a cut.
  const long = ordinary(1_200_000);
  const exact = lib(long);
  const counted = await countTokens(long);
  t.ok(counted >= exact && counted <= exact * 1.001, `1.2 MB in chunks: ${counted} against ${exact}`);
});

t.test('long runs: close above the real count, never split inside a character', async (t) => {
  const word = randomWord(8_000);
  const exact = lib(word);
  const bounded = countBounded(word, lib);
  t.ok(bounded >= exact && bounded <= exact * 1.02, `a random 8,000-letter word: ${bounded} against ${exact}`);
  t.equal(countBounded('x'.repeat(20_000), lib), lib('x'.repeat(20_000)), 'a repeated letter: the same count');

  // "!" then emoji: one pre-token, whose 256-unit cuts would fall between the halves of a pair.
  const emoji = '!' + '🙂'.repeat(2_000);
  const pieces: string[] = [];
  const n = countBounded(emoji, (s) => (pieces.push(s), lib(s)));
  t.ok(pieces.length > 10, `cut into ${pieces.length} pieces`);
  t.ok(
    pieces.every((p) => p.length <= MAX_PIECE),
    'none longer than MAX_PIECE',
  );
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  t.notOk(
    pieces.some((p) => lone.test(p)),
    'no piece holds half a surrogate pair',
  );
  t.equal(n, lib(emoji), 'and the count is the real one');
});

t.test('runs that take gpt-tokenizer seconds are counted in milliseconds', async (t) => {
  // Before: 100 KB of "x" took 4.8 s on this machine; 100 KB of one emoji 32 s.
  for (const [name, text, expected] of [
    ['1 MB of one letter', 'x'.repeat(1_000_000), 125_000],
    ['1 MB of one emoji', '🙂'.repeat(500_000), 500_000],
    ['1 MB of spaces', ' '.repeat(1_000_000), undefined],
    ['300 KB of one random word', randomWord(300_000), undefined],
  ] as const) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const n = await countTokens(text);
    // CPU time, not wall time: the count runs on the tokenizer thread of this process (the loop
    // only waits meanwhile), at nice 10, which a machine busy with other test files starves for
    // many times its CPU time (a random word took 28.6 s of wall time so, 1.6 s on a quiet one).
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const ms = performance.now() - started;
    // A random word is the slow case of the bounded count. Unbounded, a pre-token's merges grow
    // with the square of its length (100 KB took seconds, above): 300 KB is a minute of CPU or
    // more, and 8 s still tells the two apart.
    const limit = 8_000;
    t.ok(cpuMs < limit, `${name}: ${n} tokens in ${Math.round(cpuMs)} ms of CPU (${Math.round(ms)} ms)`);
    if (expected !== undefined) t.equal(n, expected);
    t.ok(n > 0 && n < Buffer.byteLength(text), 'counted, not the byte bound');
  }
});

t.test('counting never holds the event loop', async (t) => {
  const texts = [randomWord(300_000), ordinary(2_000_000), '🙂'.repeat(100_001)];
  let worst = 0;
  let last = performance.now();
  const beat = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 2);
  const started = performance.now();
  const counts = await Promise.all(texts.map((text) => countTokens(text)));
  const took = performance.now() - started;
  clearInterval(beat);
  t.ok(counts.every((n) => n > 0));
  t.ok(took > 100, `long enough to tell (${Math.round(took)} ms)`);
  // Counted on the loop, the three texts would run one after another and the longest would hold
  // it for at least a third of the time; a quarter leaves room for a loaded machine's scheduler
  // (tap runs three files at once on two cores) without letting that through.
  t.ok(worst < took / 4, `the loop went at most ${Math.round(worst)} ms of ${Math.round(took)} without a turn`);
});

t.test("special tokens in a client's text are text", async (t) => {
  t.equal(await countTokens('<|endoftext|> hi'), lib('<|endoftext|> hi'));
  t.ok((await countTokens('<|endoftext|>')) > 1, 'not the one special token');
});

/** A Messages body of one user message per text. */
const messages = (...texts: string[]) => ({
  body: Buffer.from(JSON.stringify({ model: 'm', messages: texts.map((text) => ({ role: 'user', content: text })) })),
  dialect: 'anthropic' as const,
  defaults: { max_tokens: 1 },
});

t.test('size and backlog limits', async (t) => {
  await t.rejects(
    countRequestBody(messages('x'.repeat(MAX_COUNT_CHARS), 'y')),
    { name: 'GatewayError', kind: 'too_large' },
    'past MAX_COUNT_CHARS in all: refused',
  );
  t.equal(
    (await countRequestBody(messages('x'.repeat(80), ' hello'))).tokens,
    10 + lib(' hello') + 2 * 4,
    "within it: the sum, and each message's markers",
  );
  // One string queued many times: the backlog grows by its length each time, the memory does not.
  const big = 'x'.repeat(4 * 1024 * 1024);
  const queued: Promise<number>[] = [];
  while (tokenizerState().queuedChars + big.length <= MAX_QUEUED_CHARS) queued.push(countTokens(big));
  await t.rejects(
    countRequestBody(messages('hello')),
    TokenizerRefused,
    "a request's count is refused behind a long backlog",
  );
  t.equal(await countTokens(big), big.length, 'past the backlog bound: at once, the byte upper bound');
  const counted = await Promise.all(queued);
  t.ok(
    counted.every((n) => n === big.length / 8),
    'what was queued is counted',
  );
  t.equal(tokenizerState().queuedChars, 0, 'and the backlog is empty again');
});

t.test(
  "a request's count, from its bytes, in the thread: per-message overhead, images, every text, and the client's mistakes",
  async (t) => {
    // Past 4 KB, so that the body is a buffer of its own, as a large request's is.
    const text = 'hello there '.repeat(500);
    const body = Buffer.from(
      JSON.stringify({
        model: 'm',
        system: 'Be brief.',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            ],
          },
        ],
      }),
    );
    const sent = JSON.parse(body.toString());
    const counted = await countRequestBody({
      body,
      dialect: 'anthropic',
      defaults: { max_tokens: 1 },
      forwardWithout: ['max_tokens'],
    });
    t.equal(counted.model, 'm');
    t.equal(counted.tokens, lib('Be brief.') + lib(text) + 4 + 2500);
    t.same(
      JSON.parse(Buffer.from(counted.forward!).toString()),
      { system: 'Be brief.', messages: sent.messages },
      'the forwarded body: no model, no budget',
    );
    t.equal(body.byteLength, 0, 'a buffer of its own was handed over to the thread, not copied');
    const small = Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}]}');
    t.equal(
      (await countRequestBody({ body: small, dialect: 'anthropic', defaults: { max_tokens: 1 } })).tokens,
      lib('hi') + 4,
    );
    t.ok(small.byteLength > 0, "a slice of Node's pool is copied, never taken");
    const refused = (b: string) =>
      countRequestBody({ body: Buffer.from(b), dialect: 'anthropic', defaults: { max_tokens: 1 } }).then(
        () => undefined,
        (e: unknown) => e,
      );
    const bad = await refused('{"model": ');
    t.ok(
      bad instanceof GatewayError && bad.kind === 'invalid_request' && bad.code === 'invalid_json',
      'not JSON: the 400 of the surface',
    );
    const wrong = await refused('{"model":"m","messages":"hi"}');
    t.ok(
      wrong instanceof GatewayError && wrong.kind === 'invalid_request' && wrong.param === 'messages',
      "the dialect's own 400, naming the field",
    );
    t.ok((await refused('[1]')) instanceof GatewayError, 'not an object');
    t.equal(tokenizerState().requestBytes, 0, 'nothing left waiting');
  },
);

t.test('the thread starts from the sources as `node src/bin.js` runs them: tsx registered in code', async (t) => {
  // Plain node, no loader in execArgv or NODE_OPTIONS: what src/bin.js does, then a count.
  const script = `import { register } from 'tsx/esm/api'; register();
    const { countTokens } = await import('./src/billing/tokens.ts');
    process.stdout.write(String(await countTokens('x'.repeat(1000))));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env: childEnv(),
    timeout: 60_000,
  }).toString();
  t.equal(out, '125', 'counted by the thread (the byte bound would be 1000)');
});
