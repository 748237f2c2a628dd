import t from 'tap';
import { from, lastValueFrom, toArray } from 'rxjs';
import { encodeSSE } from '../../src/stream/sse.js';
import { parseSSE } from '../helpers/sse.js';

t.test('splits events across chunk boundaries and keeps raw bytes', async (t) => {
  const wire = 'event: a\ndata: {"x":1}\n\ndata: one\r\ndata: two\r\n\r\n: comment\n\ndata: tail';
  const bytes = Buffer.from(wire);
  const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 22), bytes.subarray(22, 23), bytes.subarray(23)];
  const events = await lastValueFrom(from(chunks).pipe(parseSSE(), toArray()));
  t.same(
    events.map((e) => [e.event, e.data]),
    [
      ['a', '{"x":1}'],
      [undefined, 'one\ntwo'],
      [undefined, 'tail'],
    ],
  );
  t.equal(Buffer.concat(events.map((e) => e.raw)).toString(), wire.replace(': comment\n\n', ''));
  t.equal(encodeSSE('{}', 'ping').toString(), 'event: ping\ndata: {}\n\n');
});

t.test('every event shape reads the same, whether the common shape or not', async (t) => {
  const cases: [string, [string | undefined, string] | null][] = [
    ['data: {"a":1}\n\n', [undefined, '{"a":1}']],
    ['event: ping\ndata: {}\n\n', ['ping', '{}']],
    ['data:{"a":1}\n\n', [undefined, '{"a":1}']],
    ['data: x\r\n\r\n', [undefined, 'x']],
    ['event: e\r\ndata: x\r\n\r\n', ['e', 'x']],
    ['data: a\ndata: b\n\n', [undefined, 'a\nb']],
    ['event: e\ndata: a\ndata: b\n\n', ['e', 'a\nb']],
    ['event: e\n\n', null],
    [': keep-alive\ndata: y\n\n', [undefined, 'y']],
    ['event: e\nid: 7\ndata: z\n\n', ['e', 'z']],
    ['data: \n\n', [undefined, '']],
    ['data: last without its blank line', [undefined, 'last without its blank line']],
    ['data: one\nx', [undefined, 'one']],
  ];
  for (const [wire, want] of cases) {
    const events = await lastValueFrom(from([Buffer.from(wire)]).pipe(parseSSE(), toArray()));
    t.same(
      events.map((e) => [e.event, e.data]),
      want ? [want] : [],
      JSON.stringify(wire),
    );
    if (want) t.equal(events[0]!.raw.toString(), wire, `${JSON.stringify(wire)}: raw bytes kept`);
  }
});
