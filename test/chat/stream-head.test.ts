// A stream's status line and headers leave with its first event, in one send (one TCP segment),
// whether that event came with the upstream's headers or long after them. Segments are read
// from the kernel's own count (`ss`).
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());

// An upstream that answers 200 with its headers at once, its first event only later, the rest after that.
const LATE_MS = 800;
const late = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    setTimeout(() => {
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-late', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: 'hi' }, null));
      setTimeout(() => {
        res.write(chunk({}, 'stop'));
        res.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-late', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
      }, 300);
    }, LATE_MS);
  });
});
await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
t.teardown(() => late.close());
const lateUrl = `http://127.0.0.1:${(late.address() as net.AddressInfo).port}`;

const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    providers: [{ id: 'late', dialect: 'openai', base_url: `${lateUrl}/v1` }],
    models: [{ id: 'late-model', ...PRICES, routes: [{ provider: 'late', model: 'm' }] }],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const user = await gw.user('10');
const gwPort = Number(new URL(gw.url).port);

/** Data segments the gateway has sent on its end of the connection from `clientPort`. */
function segmentsSent(clientPort: number): number {
  const out = execFileSync(
    'ss',
    ['-tinH', 'state', 'established', `( sport = :${gwPort} and dport = :${clientPort} )`],
    { encoding: 'utf8' },
  );
  const m = /\bdata_segs_out:(\d+)/.exec(out);
  if (!m) throw new Error(`ss printed no data_segs_out for port ${clientPort}: ${out}`);
  return Number(m[1]);
}

/** A raw streamed request; resolves with the socket once `until` has been read, and the time it took. */
function rawStream(model: string, prompt: string) {
  const socket = net.connect(gwPort, '127.0.0.1');
  const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: prompt }] });
  const started = performance.now();
  let text = '';
  const waiters: { until: string; done: (ms: number) => void }[] = [];
  socket.on('data', (b) => {
    text += b.toString('latin1');
    for (const w of waiters.splice(0)) {
      if (text.includes(w.until)) w.done(performance.now() - started);
      else waiters.push(w);
    }
  });
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return {
    socket,
    text: () => text,
    read: (until: string) =>
      new Promise<number>((resolve) => {
        if (text.includes(until)) resolve(performance.now() - started);
        else waiters.push({ until, done: resolve });
      }),
  };
}

t.test('the status line goes out with the first event that came with the upstream headers', async (t) => {
  // The fake writes its headers and the role chunk together, then a token every 500 ms.
  const s = rawStream('oa-model', 'count [[paced:3:500]]');
  t.teardown(() => s.socket.destroy());
  await s.read('"role":"assistant"');
  const port = s.socket.localPort!;
  t.match(s.text(), /^HTTP\/1\.1 200 OK\r\n/, 'the answer is a 200');
  t.equal(segmentsSent(port), 1, 'status, headers and the first event left in one segment');
  await s.read('data: [DONE]');
  t.ok(segmentsSent(port) > 1, 'later events follow in segments of their own');
});

t.test('the status line waits for a first event that comes long after the upstream headers', async (t) => {
  const s = rawStream('late-model', 'hello');
  t.teardown(() => s.socket.destroy());
  const at = await s.read('"content":"hi"');
  const port = s.socket.localPort!;
  // uWS ends a chunked head only with the first body bytes: a head sent alone was never usable.
  t.ok(at >= LATE_MS, `the first event came after ${Math.round(at)} ms`);
  t.match(s.text(), /^HTTP\/1\.1 200 OK\r\n[^]*content-type: text\/event-stream/, "the stream's status and headers");
  t.equal(segmentsSent(port), 1, 'status, headers and the first event left in one segment');
  await s.read('data: [DONE]');
});
