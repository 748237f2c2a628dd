// The stream meter on long answers without usage: memory stays bounded while the count stays
// what the tokenizer says of the whole text (within a token per place the text was cut).
import t from 'tap';
import { countTokens } from 'gpt-tokenizer';
import { StreamMeter } from '../../src/inference/meter.js';
import type { IRRequest } from '../../src/dialects/ir.js';

const ir: IRRequest = { model: 'm', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }], stream: true, includeUsage: false };
const piece = 'The quick brown fox jumps over the lazy dog. ';

const held = (meter: StreamMeter): number => meter.heldBytes;

t.test('pass-through events: bounded memory, tokenizer count of all the text', async (t) => {
  const meter = new StreamMeter(ir);
  let text = '';
  let maxHeld = 0;
  for (let i = 0; i < 20_000; i++) {
    text += piece;
    meter.noteRaw(JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: piece } }] }));
    maxHeld = Math.max(maxHeld, held(meter));
  }
  t.ok(text.length > 800_000, 'an answer far larger than the limits');
  t.ok(maxHeld < 400 * 1024, `held at most ${maxHeld} bytes`);
  const usage = await meter.final();
  const exact = countTokens(text);
  const cuts = Math.ceil(text.length / (256 * 1024));
  t.ok(Math.abs(usage.output - exact) <= 2 * cuts, `counted ${usage.output}, whole text ${exact}`);
  t.equal(usage.input, countTokens('hello there') + 4, 'input counted from the request');
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
  for (const p of [...pieces, 'x'.repeat(3000)]) meter.noteRaw(JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] }));
  meter.noteText('');
  const usage = await meter.final();
  t.equal(usage.output, countTokens(pieces.join('') + 'x'.repeat(3000)), 'the tokenizer count of exactly the text sent');
});
