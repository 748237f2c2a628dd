// The upstream client's connection pool over real HTTP: connections kept and reused, never more
// than the limit, requests past it answered in turn as connections come free.
import t, { type Test } from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UpstreamClient } from '../../src/upstream/client.js';

/** A server that holds every answer until `answer(i)`, and counts the connections it saw. */
async function holdingServer(t: Test, port = 0) {
  const sockets = new Set<Socket>();
  let open = 0;
  let peakOpen = 0;
  const held: ServerResponse[] = [];
  const arrivals: string[] = [];
  const paths: string[] = [];
  let arrived = () => {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    paths.push(req.url ?? '');
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      arrivals.push(Buffer.concat(chunks).toString());
      held.push(res);
      arrived();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    peakOpen = Math.max(peakOpen, ++open);
    s.on('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    arrivals,
    paths,
    connections: () => sockets.size,
    open: () => open,
    peakOpen: () => peakOpen,
    /** Resolves once `n` requests have arrived in all. */
    until: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (arrivals.length >= n ? resolve() : (arrived = check));
        check();
      }),
    answer: (i: number, text: string) => held[i]!.end(text),
  };
}

const post = (client: UpstreamClient, origin: string, body: string) =>
  client.post(`${origin}/v1/chat/completions`, { 'content-type': 'application/json' }, body).then((r) => r.body.text());

t.test('a connection is kept and used again', async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 4,
    idleConnections: 4,
  });
  t.teardown(() => client.close());
  for (let i = 0; i < 3; i++) {
    const answer = post(client, s.origin, `r${i}`);
    await s.until(i + 1);
    s.answer(i, `a${i}`);
    t.equal(await answer, `a${i}`);
    // The connection is free again once undici has finished with the answer, a moment after
    // its body ends: a client's next request comes later than that.
    await new Promise((r) => setImmediate(r));
  }
  t.equal(s.connections(), 1, 'three requests in turn, one connection');
});

t.test('never more connections than the limit; the requests past it go out in turn', async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 2,
    idleConnections: 2,
  });
  t.teardown(() => client.close());
  const answers = ['r0', 'r1', 'r2', 'r3'].map((b) => post(client, s.origin, b));
  await s.until(2);
  // Give the two waiting requests every chance to go out early: they must not.
  await new Promise((r) => setTimeout(r, 100));
  t.same(s.arrivals, ['r0', 'r1'], 'two requests out, two waiting');
  s.answer(1, 'a1');
  t.equal(await answers[1], 'a1');
  await s.until(3);
  t.equal(s.arrivals[2], 'r2', 'the first waiting request takes the connection that came free');
  s.answer(0, 'a0');
  s.answer(2, 'a2');
  await s.until(4);
  t.equal(s.arrivals[3], 'r3', 'then the next');
  s.answer(3, 'a3');
  t.same(await Promise.all(answers), ['a0', 'a1', 'a2', 'a3'], 'every request answered');
  t.equal(s.peakOpen(), 2, 'at most two connections open at once');
  t.equal(s.connections(), 2, 'and only two made');
});

t.test('a closed client refuses new requests', async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 2,
    idleConnections: 2,
  });
  const answer = post(client, s.origin, 'r0');
  await s.until(1);
  const closing = client.close();
  s.answer(0, 'a0');
  t.equal(await answer, 'a0', 'a request under way still finishes');
  await closing;
  await t.rejects(post(client, s.origin, 'r1'), { name: 'ClientClosedError' }, 'a new one is refused');
  await t.rejects(post(client, 'http://127.0.0.1:9', 'r1'), { name: 'ClientClosedError' }, 'to any origin');
});

t.test('a request refused before it is sent leaves its connection free', async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 1,
    idleConnections: 1,
  });
  t.teardown(() => client.close());
  for (let i = 0; i < 3; i++) {
    await t.rejects(
      client.post(`${s.origin}/v1/chat/completions`, { 'x-bad': 'a\r\nb' }, 'bad'),
      { code: 'UND_ERR_INVALID_ARG' },
      'an invalid header value is refused',
    );
  }
  const answer = post(client, s.origin, 'r0');
  await s.until(1);
  s.answer(0, 'a0');
  t.equal(await answer, 'a0', 'the only connection still serves the next request');
  t.same(s.arrivals, ['r0'], 'nothing of the refused requests reached the upstream');
});

t.test('requests waiting behind a connection that failed are answered, each with its error', async (t) => {
  // A port nothing listens on: every connection is refused.
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
  const { port } = dead.address() as AddressInfo;
  await new Promise<void>((r) => dead.close(() => r()));
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 1,
    idleConnections: 1,
  });
  t.teardown(() => client.close());
  const tries = ['r0', 'r1', 'r2'].map((b) =>
    post(client, `http://127.0.0.1:${port}`, b).then(
      () => 'answered',
      (err) => err.code,
    ),
  );
  t.same(
    await Promise.all(tries),
    ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'],
    'one connection allowed, three refusals, none left waiting',
  );

  // The origin comes back: the pool is not stuck on its failed connections.
  const s = await holdingServer(t, port);
  const answer = post(client, s.origin, 'r3');
  await s.until(1);
  s.answer(0, 'a3');
  t.equal(await answer, 'a3', 'the next request is answered');
});

t.test("the request path is the URL's own, whatever the origin drops from it", async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 2,
    idleConnections: 2,
  });
  t.teardown(() => client.close());
  // `user@` is not part of the origin: a path cut at the origin's length would start inside the host.
  const withUser = s.origin.replace('http://', 'http://user@');
  const answer = client.post(`${withUser}/v1/chat/completions?beta=true`, {}, 'r0').then((r) => r.body.text());
  await s.until(1);
  s.answer(0, 'a0');
  t.equal(await answer, 'a0');
  t.same(s.paths, ['/v1/chat/completions?beta=true'], 'the upstream saw the path and query as configured');
});

t.test('connections that come free past the idle limit are closed', async (t) => {
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 4,
    idleConnections: 1,
  });
  t.teardown(() => client.close());
  const answers = ['r0', 'r1', 'r2'].map((b) => post(client, s.origin, b));
  await s.until(3);
  t.equal(s.open(), 3, 'three requests at once, three connections');
  [0, 1, 2].forEach((i) => s.answer(i, `a${i}`));
  t.same(await Promise.all(answers), ['a0', 'a1', 'a2']);
  const deadline = Date.now() + 5000;
  while (s.open() > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(s.open(), 1, 'one kept open, the others closed at once rather than after the keep-alive time');
  const again = post(client, s.origin, 'r3');
  await s.until(4);
  s.answer(3, 'a3');
  t.equal(await again, 'a3', 'the kept one serves the next request');
  t.equal(s.connections(), 3, 'on the connection kept, not a new one');
});

t.test('closing the connections past the idle limit makes no error for each', async (t) => {
  // Node's socket destroy formats its error's stack: close() made a new error for every
  // connection it closed, thousands at once when a burst of streams ends.
  const formatted: string[] = [];
  const before = Error.prepareStackTrace;
  Error.prepareStackTrace = (err, frames) => {
    formatted.push(err.name);
    return before ? before(err, frames) : `${err}\n    at ${frames.join('\n    at ')}`;
  };
  t.teardown(() => void (Error.prepareStackTrace = before));
  const s = await holdingServer(t);
  const client = new UpstreamClient({
    connectMs: 2000,
    firstByteMs: 5000,
    idleMs: 5000,
    connections: 8,
    idleConnections: 1,
  });
  t.teardown(() => client.close());
  const answers = [0, 1, 2, 3, 4, 5].map((i) => post(client, s.origin, `r${i}`));
  await s.until(6);
  [0, 1, 2, 3, 4, 5].forEach((i) => s.answer(i, `a${i}`));
  t.same(await Promise.all(answers), ['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  const deadline = Date.now() + 5000;
  while (s.open() > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(s.open(), 1, 'five connections closed');
  t.same(formatted, [], 'no error was made and formatted for them');
});
