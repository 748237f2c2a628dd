// The upstream client over real HTTP: what an open answer keeps of the exchange.
import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { Cancel } from '../../src/upstream/cancel.js';
import { UpstreamClient } from '../../src/upstream/client.js';

/**
 * A server that answers with one SSE event and holds the rest until `finish()`; a path of
 * `/slow` is never answered (`requestIn` says it arrived). Closed with the test.
 */
async function sseServer(t: Test, headers: Record<string, string> = {}) {
  const state = { finish: () => {}, arrived: () => {} };
  const requestIn = new Promise<void>((r) => (state.arrived = r));
  const server = createServer((req, res) => {
    if (req.url === '/slow') {
      state.arrived();
      return; // never answers: only the signal ends it
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });
    res.write('data: {"n":1}\n\n');
    state.finish = () => res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 4,
    idleConnections: 4,
  });
  t.teardown(() => client.close());
  const { port } = server.address() as AddressInfo;
  return { client, origin: `http://127.0.0.1:${port}`, finish: () => state.finish(), requestIn };
}

t.test('an answer being streamed holds no raw header buffers', async (t) => {
  const { client, origin, finish } = await sseServer(t, { 'x-extra': 'y'.repeat(200) });
  const res = await client.post(`${origin}/v1/chat/completions`, { 'content-type': 'application/json' }, '{}');
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

t.test('an answer being streamed does not keep its headers', async (t) => {
  const { client, origin, finish } = await sseServer(t);
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Only the body is kept, as a stream keeps it; the headers are read and dropped.
  const { body, headersRef } = await client.post(`${origin}/v1/chat/completions`, {}, '{}').then((res) => ({
    body: res.body,
    headersRef: new WeakRef(res.headers),
  }));
  // A collection needs the stack clear of the answer: a few turns of the event loop.
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  gc();
  t.equal(headersRef.deref(), undefined, 'the headers object is collected while the body is still open');
  const text = body.text();
  finish();
  t.equal(await text, 'data: {"n":1}\n\ndata: [DONE]\n\n', 'the body still arrives whole');
});

t.test('the cancel covers the wait for an answer only', async (t) => {
  const { client, origin, finish, requestIn } = await sseServer(t);
  const answered = new Cancel();
  const res = await client.post(`${origin}/fast`, {}, '{}', answered);
  // A listener left on the cancel would keep the exchange (and what it reads into) reachable
  // from the request's state for as long as the stream lasts.
  t.equal(answered.listening, false, 'no listener left once the answer is in');
  answered.cancel();
  const text = res.body.text();
  finish();
  t.equal(
    await text,
    'data: {"n":1}\n\ndata: [DONE]\n\n',
    'cancelling after the answer leaves the body to its consumer',
  );

  const waiting = new Cancel();
  const pending = client.post(`${origin}/slow`, {}, '{}', waiting);
  await requestIn;
  t.equal(waiting.listening, true, 'the cancel is watched while no answer has come');
  waiting.cancel();
  await t.rejects(pending, 'cancelling before the answer abandons the request');
  t.equal(waiting.listening, false, 'and the listener goes with it');
  await t.rejects(
    client.post(`${origin}/fast`, {}, '{}', waiting),
    'a cancel already given stops the next request before it is sent',
  );
});
