import t from 'tap';
import { from, lastValueFrom, toArray } from 'rxjs';
import { parseSSE, encodeSSE } from '../../src/stream/sse.js';

t.test('splits events across chunk boundaries and keeps raw bytes', async (t) => {
  const wire = 'event: a\ndata: {"x":1}\n\ndata: one\r\ndata: two\r\n\r\n: comment\n\ndata: tail';
  const bytes = Buffer.from(wire);
  const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 22), bytes.subarray(22, 23), bytes.subarray(23)];
  const events = await lastValueFrom(from(chunks).pipe(parseSSE(), toArray()));
  t.same(events.map((e) => [e.event, e.data]), [['a', '{"x":1}'], [undefined, 'one\ntwo'], [undefined, 'tail']]);
  t.equal(Buffer.concat(events.map((e) => e.raw)).toString(), wire.replace(': comment\n\n', ''));
  t.equal(encodeSSE('{}', 'ping').toString(), 'event: ping\ndata: {}\n\n');
});
