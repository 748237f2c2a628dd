// The upstream client over real HTTP: what an open answer keeps of the exchange.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamClient } from '../../src/upstream/client.js';

t.test('an answer being streamed holds no raw header buffers', async (t) => {
  let finish!: () => void;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-extra': 'y'.repeat(200) });
    res.write('data: {"n":1}\n\n');
    finish = () => res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const client = new UpstreamClient({ connectMs: 2000, firstByteMs: 5000, idleMs: 5000, connections: 4 });
  t.teardown(() => client.close());
  const { port } = server.address() as AddressInfo;
  const res = await client.post(`http://127.0.0.1:${port}/v1/chat/completions`, { 'content-type': 'application/json' }, '{}');
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'text/event-stream', 'headers are parsed for the caller');
  t.equal(res.headers['x-extra'], 'y'.repeat(200));
  // undici's controller would keep them (views of the socket read) until the answer ends.
  const controller = (res.body as unknown as { controller: { rawHeaders: unknown } }).controller;
  t.equal(controller.rawHeaders, null, 'the raw header buffers are let go once parsed');
  const text = res.body.text();
  finish();
  t.equal(await text, 'data: {"n":1}\n\ndata: [DONE]\n\n', 'the body still arrives whole');
});
