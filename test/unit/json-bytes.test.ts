// Renaming the model in pass-through answers: in the event's bytes, whether or not the event is
// all ASCII, and in a whole answer's text only when that text is in the compact form.
import t from 'tap';
import { eventWithModel, modelName, renamedAnswer, textWithModel, withModel } from '../../src/stream/json-bytes.js';
import { SSEDecoder, type SSEEvent } from '../../src/stream/sse.js';

const eventOf = (wire: string): SSEEvent => {
  const out: SSEEvent[] = [];
  new SSEDecoder().push(Buffer.from(wire), { event: (ev) => out.push(ev) });
  return out[0]!;
};
const model = JSON.stringify('oa-model');
const rename = (wire: string) => eventWithModel(eventOf(wire), modelName('oa-model')).toString();

t.test('an event names the catalogue model, its other bytes as they came', async (t) => {
  const chunk = (m: string, text: string) =>
    `data: {"id":"c1","model":${JSON.stringify(m)},"choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}}}]}\n\n`;
  t.equal(rename(chunk('upstream-oa', 'hi')), chunk('oa-model', 'hi'), 'ASCII: patched where the text says');
  t.equal(
    rename(chunk('upstream-oa', 'Grüße, 日本語 🙂')),
    chunk('oa-model', 'Grüße, 日本語 🙂'),
    'not ASCII: found in the bytes',
  );
  t.equal(rename(chunk('up"stream\\', 'x')), chunk('oa-model', 'x'), 'an escaped name');
  t.equal(rename(chunk('', 'x')), chunk('oa-model', 'x'), 'an empty name');
  t.equal(
    rename(`event: message_start\ndata: {"type":"message_start","message":{"model":"claude-x","id":"m"}}\n\n`),
    `event: message_start\ndata: {"type":"message_start","message":{"model":"oa-model","id":"m"}}\n\n`,
  );
  const same = eventOf(chunk('oa-model', 'x'));
  t.equal(eventWithModel(same, modelName('oa-model')), same.raw, 'already named: the same bytes, not a copy');
  const none = eventOf('data: {"choices":[]}\n\n');
  t.equal(eventWithModel(none, modelName('oa-model')), none.raw, 'no model: untouched');
  const text = 'data: {"model":"a","tools":[{"model":"b"}]}\n\n';
  t.equal(
    withModel(Buffer.from(text), 0, Buffer.from(model)).toString(),
    'data: {"model":"oa-model","tools":[{"model":"b"}]}\n\n',
    'only the first',
  );
});

t.test('a whole answer: spliced when compact, re-serialised otherwise', async (t) => {
  const compact = '{"id":"x","model":"upstream-oa","choices":[]}';
  t.equal(textWithModel(compact, 'upstream-oa', 'oa-model'), '{"id":"x","model":"oa-model","choices":[]}');
  t.equal(
    textWithModel('{"id":"x", "model": "upstream-oa"}', 'upstream-oa', 'oa-model'),
    undefined,
    'spaced: not spliced',
  );
  t.equal(
    textWithModel('{"m":{"model":"other"},"model":"upstream-oa"}', 'upstream-oa', 'oa-model'),
    undefined,
    'a nested one first: not spliced',
  );
  const spaced = '{"id":"x", "model": "upstream-oa"}';
  t.same(JSON.parse(renamedAnswer(spaced, JSON.parse(spaced), 'oa-model')), { id: 'x', model: 'oa-model' });
  t.equal(renamedAnswer(compact, JSON.parse(compact), 'upstream-oa'), compact, 'already named: as it came');
});
