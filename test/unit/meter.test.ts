// The stream meter on long answers without usage: memory stays bounded while the count stays
// what the tokenizer says of the whole text (within a token per place the text was cut).
import t from 'tap';
import { countTokens } from 'gpt-tokenizer';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parsedText, StreamMeter } from '../../src/inference/meter.js';
import { countTextTokens } from '../../src/billing/tokens.js';
import { deltaText } from '../../src/stream/delta-text.js';
import { FIXTURES_DIR } from '../fixtures/index.js';
import { DIALECTS } from '../../src/dialects/index.js';

// What went upstream: every string and key of it is input the vendor read.
const ir = {
  body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello there' }] }),
  dialect: DIALECTS.openai,
  maxImageTokens: 2500,
};
const forwardedStrings = ['model', 'm', 'messages', 'role', 'user', 'content', 'hello there'];
const piece = 'The quick brown fox jumps over the lazy dog. ';

const held = (meter: StreamMeter): number => meter.heldBytes;

t.test('pass-through events: bounded memory, tokenizer count of all the text', async (t) => {
  const meter = new StreamMeter(ir);
  let text = '';
  let maxHeld = 0;
  for (let i = 0; i < 20_000; i++) {
    text += piece;
    meter.noteRaw(
      JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: piece } }] }),
    );
    maxHeld = Math.max(maxHeld, held(meter));
  }
  t.ok(text.length > 800_000, 'an answer far larger than the limits');
  t.ok(maxHeld < 400 * 1024, `held at most ${maxHeld} bytes`);
  const usage = await meter.final();
  const exact = countTokens(text);
  const cuts = Math.ceil(text.length / (256 * 1024));
  t.ok(Math.abs(usage.output - exact) <= 2 * cuts, `counted ${usage.output}, whole text ${exact}`);
  const each = forwardedStrings.reduce((n, s) => n + countTokens(s), 0);
  t.equal(usage.input, each, 'input: every string and key that was forwarded, each counted');
});

t.test('translated text deltas: the same bound; reported usage wins', async (t) => {
  const meter = new StreamMeter(ir);
  let maxHeld = 0;
  for (let i = 0; i < 10_000; i++) {
    meter.noteText(piece);
    maxHeld = Math.max(maxHeld, held(meter));
  }
  t.ok(maxHeld <= 256 * 1024 + piece.length, `held at most ${maxHeld} bytes`);
  meter.noteUsage({ input: 7, output: 3, cacheRead: 1 });
  t.same(await meter.final(), { input: 7, output: 3, cacheRead: 1, cacheWrite: 0 });
});

t.test('text outside ASCII comes back whole from the held bytes', async (t) => {
  const meter = new StreamMeter(ir);
  const pieces = ['Grüße, ', '日本語の', 'テキスト ', '🙂 done'];
  // Small events and one past the raw limit, so both the held bytes and the boiled-down text are read back.
  for (const p of [...pieces, 'x'.repeat(3000)])
    meter.noteRaw(JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] }));
  meter.noteText('');
  const usage = await meter.final();
  t.equal(
    usage.output,
    countTokens(pieces.join('') + 'x'.repeat(3000)),
    'the tokenizer count of exactly the text sent',
  );
});

t.test('text given as bytes and as strings, in any order, is held in the order it came', async (t) => {
  const meter = new StreamMeter(ir);
  // An empty text first (no buffer yet), then bytes of every size, short ones copied one by
  // one and long ones in a piece, across several growths of the buffer.
  meter.noteText('');
  const pieces = ['', 'Grüße ', 'x'.repeat(65), '日本語 ', 'y'.repeat(300), '🙂', 'z'.repeat(2000), ' end'];
  pieces.forEach((p, i) => {
    if (i % 2 === 0) meter.noteText(p);
    else {
      // The text inside a larger read, as a matched event's is.
      const raw = Buffer.from(`data: {"x":"${p}"}\n\n`);
      const start = raw.indexOf('"x":"') + 5;
      meter.noteTextBytes(raw, start, start + Buffer.byteLength(p));
    }
  });
  t.equal(meter.heldBytes, Buffer.byteLength(pieces.join('')), 'every byte held');
  const usage = await meter.final();
  t.equal(usage.output, await countTextTokens([pieces.join('')]), 'the count of exactly that text');
});

// The unparsed read of common deltas must give exactly what parsing gives, or stand aside.
const parsed = (data: string): string => {
  const pieces: string[] = [];
  parsedText(data, { append: (s) => pieces.push(s) });
  return pieces.join('');
};

function fixtureEvents(): string[] {
  const files = readdirSync(FIXTURES_DIR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sse'));
  const out: string[] = [];
  for (const f of files) {
    for (const line of readFileSync(path.join(FIXTURES_DIR, f), 'utf8').split('\n'))
      if (line.startsWith('data: ')) out.push(line.slice(6));
  }
  return out;
}

t.test('delta text read without parsing: the same as parsing on every recorded event', async (t) => {
  const events = fixtureEvents();
  t.ok(events.length > 100, `${events.length} recorded events`);
  let fast = 0;
  for (const data of events) {
    const quick = deltaText(data);
    if (quick === undefined) continue;
    fast++;
    t.equal(quick, parsed(data), data.slice(0, 120));
  }
  t.ok(fast > 20, `${fast} of them read without a parse`);
});

t.test('delta text read without parsing: escapes, Unicode and shapes it must leave to the parser', async (t) => {
  const texts = [
    'plain',
    '',
    'a "quoted" word',
    'ends with a backslash \\',
    '\\"}',
    'line\nbreak\ttab',
    'Grüße 日本 🙂',
    '\u2028\u0000',
    '"delta":{"content":"x"}',
    '\\\\"',
  ];
  // Every character outside printable ASCII as a \u escape: in event text, and in test names,
  // where a raw U+2028 would break the TAP stream.
  const asciiOnly = (s: string) =>
    s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const name = (s: string) => asciiOnly(JSON.stringify(s));
  for (const text of texts) {
    const openai = JSON.stringify({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
    });
    const anthropic = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    t.equal(deltaText(openai), text, `openai ${name(text)}`);
    t.equal(deltaText(anthropic), text, `anthropic ${name(text)}`);
    // Text that could be mistaken for structure when escaped as \u sequences.
    const unicodeEscaped = asciiOnly(openai);
    t.equal(deltaText(unicodeEscaped) ?? parsed(unicodeEscaped), text, `\\u-escaped ${name(text)}`);
  }
  const leftToParser = [
    // Two choices: both count.
    JSON.stringify({
      choices: [
        { index: 0, delta: { content: 'a' } },
        { index: 1, delta: { content: 'b' } },
      ],
    }),
    // A role after the content, a refusal, reasoning or tool calls beside it.
    JSON.stringify({ choices: [{ index: 0, delta: { content: 'a', role: 'assistant' } }] }),
    JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: 'a', refusal: 'no' } }] }),
    JSON.stringify({
      choices: [
        { index: 0, delta: {} },
        { index: 1, delta: { content: 'b' } },
      ],
    }),
    JSON.stringify({ choices: [{ index: 0, delta: { content: 'a', refusal: 'no' } }] }),
    JSON.stringify({ choices: [{ index: 0, delta: { reasoning_content: 'think', content: 'a' } }] }),
    JSON.stringify({
      choices: [{ index: 0, delta: { content: 'a', tool_calls: [{ function: { name: 'f', arguments: '{}' } }] } }],
    }),
    // Spaces the fast read does not expect, a key that ends in an escaped quote, broken JSON.
    '{"choices": [{"index": 0, "delta": {"content": "a"}}]}',
    '{"choices":[{"x\\"delta":{"content":"a"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"a',
    '{"choices":[{"index":0,"delta":{"content":"bad \\x escape"}}]}',
    // Anthropic deltas other than text, and a top-level delta beside OpenAI choices.
    JSON.stringify({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"a":' },
    }),
    JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
    JSON.stringify({ choices: [], delta: { type: 'text_delta', text: 'x' } }),
  ];
  for (const data of leftToParser) t.equal(deltaText(data), undefined, `left to the parser: ${data}`);
  // OpenAI's first chunk (the role, empty content, a null refusal) and its last (an empty delta).
  const first = JSON.stringify({
    id: 'c',
    choices: [
      { index: 0, delta: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: null },
    ],
  });
  t.equal(deltaText(first), 'hi', 'the role chunk read without a parse');
  t.equal(
    deltaText(JSON.stringify({ id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })),
    '',
    'the empty delta read without a parse',
  );
  t.equal(
    deltaText(JSON.stringify({ type: 'message_delta', delta: {} })),
    undefined,
    'an empty delta outside OpenAI choices is left to the parser',
  );
  t.equal(parsed(leftToParser[0]!), 'ab', 'the parser reads every choice');
});
