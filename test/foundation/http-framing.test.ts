// HTTP/1.1 framing as it is on the wire, over raw sockets: a request whose Content-Length
// headers disagree is refused and its connection closed (RFC 9112 §6.3: otherwise the bytes
// after the shorter body would be read as a next request), and HEAD answers carry a head and
// no body on every path, so the connection can carry the next request.

import net from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildWeb } from '../../web/build.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { sleep } from '../helpers/http.js';

interface Head {
  status: number;
  headers: Record<string, string>;
}

/** One keep-alive connection, read byte for byte. */
class Wire {
  private buf = Buffer.alloc(0);
  closed = false;
  private wake = () => {};
  readonly socket: net.Socket;

  constructor(port: number) {
    this.socket = net.connect({ host: '127.0.0.1', port });
    this.socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    this.socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    this.socket.on('error', () => {});
  }

  send(raw: string) {
    this.socket.write(raw);
  }

  private async until(ready: () => boolean, ms = 5000) {
    const end = Date.now() + ms;
    while (!ready()) {
      if (this.closed || Date.now() > end)
        throw new Error(`no answer (closed: ${this.closed}): ${JSON.stringify(this.buf.toString('latin1'))}`);
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
    }
  }

  /** The next response's head; with `body`, its content-length bytes of body too. */
  async response(body: boolean): Promise<Head & { body: Buffer }> {
    await this.until(() => this.buf.includes('\r\n\r\n'));
    const end = this.buf.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    this.buf = this.buf.subarray(end + 4);
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)![1]);
    let content = Buffer.alloc(0);
    if (body) {
      const n = Number(headers['content-length']);
      await this.until(() => this.buf.length >= n);
      content = this.buf.subarray(0, n);
      this.buf = this.buf.subarray(n);
    }
    return { status, headers, body: content };
  }

  /** Everything that arrived and no response has claimed, as text. */
  get received(): string {
    return this.buf.toString('latin1');
  }

  /** Bytes that arrived and no response has claimed. */
  get pending(): number {
    return this.buf.length;
  }

  async waitClosed(ms = 3000) {
    const end = Date.now() + ms;
    while (!this.closed && Date.now() < end) await sleep(20);
    return this.closed;
  }

  close() {
    this.socket.destroy();
  }
}

const request = (method: string, target: string, headers: Record<string, string> = {}, body = '') =>
  `${method} ${target} HTTP/1.1\r\nhost: gw.test\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n${body}`;

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const webDir = path.join(mkdtempSync(path.join(tmpdir(), 'airouter-web-')), 'dist');
await buildWeb(webDir);
const opsPort = await new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});
const gw = await startTestGateway(t, { upstream: fake.url, env: { WEB_DIR: webDir, OPS_PORT: String(opsPort) } });
const user = await gw.user('10');

t.test('HEAD: the head GET would have, no body bytes, and the connection carries on', async (t) => {
  const paths: [port: number, target: string, headers: Record<string, string>, status: number][] = [
    [gw.port, '/', {}, 200],
    [gw.port, '/login', {}, 200],
    [gw.port, '/v1/models', { authorization: `Bearer ${user.key}` }, 200],
    [gw.port, '/v1/models', {}, 401],
    [gw.port, '/healthz', {}, 200],
    [gw.port, '/api/dashboard/openapi.json', {}, 200],
    [gw.port, '/api/dashboard/balance', {}, 401],
    [gw.port, '/no/such/path', {}, 404],
    [opsPort, '/healthz', {}, 200],
    [opsPort, '/metrics', {}, 200],
  ];
  for (const [port, target, headers, status] of paths) {
    const name = `${port === opsPort ? 'OPS_PORT ' : ''}HEAD ${target}`;
    const wire = new Wire(port);
    wire.send(request('GET', target, headers));
    const get = await wire.response(true);
    t.equal(get.status, status, `${name}: GET answers ${status}`);
    t.ok(get.body.length > 0, `${name}: GET has a body`);

    wire.send(request('HEAD', target, headers));
    const head = await wire.response(false);
    t.equal(head.status, status, `${name}: the same status`);
    t.equal(head.headers['content-type'], get.headers['content-type'], `${name}: the same content-type`);
    // A 404 names the method, and metrics move between two requests: their lengths differ a little.
    if (target === '/no/such/path' || target === '/metrics')
      t.ok(Number(head.headers['content-length']) > 0, `${name}: a length`);
    else
      t.equal(head.headers['content-length'], get.headers['content-length'], `${name}: the length the body would have`);
    await sleep(100);
    t.equal(wire.pending, 0, `${name}: not one body byte`);

    wire.send(request('GET', '/healthz'));
    const next = await wire.response(true);
    t.equal(next.status, 200, `${name}: the connection still serves the next request`);
    t.same(JSON.parse(next.body.toString()), { status: 'ok' });
    t.notOk(wire.closed);
    wire.close();
  }
});

const TARGETS: [string, Record<string, string>][] = [
  ['/v1/chat/completions', { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' }],
  ['/v1/messages', { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }],
  ['/api/dashboard/login', { 'content-type': 'application/json' }],
];
const post = (target: string, headers: Record<string, string>, lengths: string[], body: string) =>
  `POST ${target} HTTP/1.1\r\nhost: gw.test\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}${lengths.map((l) => `content-length: ${l}\r\n`).join('')}\r\n${body}`;

t.test('Content-Length headers that disagree: 400, and the connection is closed', async (t) => {
  const body = '{"model":"oa-model","messages":[]}';
  for (const [target, headers] of TARGETS) {
    for (const lengths of [
      [String(body.length), '1000'],
      ['1000', String(body.length)],
    ]) {
      const wire = new Wire(gw.port);
      wire.send(post(target, headers, lengths, body));
      const res = await wire.response(true);
      const what = `${target}, content-length ${lengths.join(' then ')}`;
      t.equal(res.status, 400, `${what}: 400`);
      t.match(res.body.toString(), /Content-Length headers that disagree/, `${what}: says why`);
      t.equal(res.headers.connection, 'close', `${what}: says the connection ends`);
      t.ok(await wire.waitClosed(), `${what}: and ends it`);
    }
  }
  t.equal(fake.requests.length, 0, 'nothing reached the upstream');
});

t.test('bytes past the shorter length are never served as a request of their own', async (t) => {
  // The second request hides where the longer length says the body goes on: answering it would
  // be request smuggling. uWS drops the connection rather than read it while the 400 is pending.
  const smuggled = request('GET', '/healthz');
  const json = '{"model":"oa-model","messages":[]}';
  for (const [target, headers] of TARGETS) {
    for (const lengths of [
      [String(json.length), String(json.length + smuggled.length)],
      [`${json.length}, ${json.length + smuggled.length}`],
    ]) {
      const wire = new Wire(gw.port);
      wire.send(post(target, headers, lengths, json + smuggled));
      const what = `${target}, content-length ${lengths.join(' then ')}`;
      t.ok(await wire.waitClosed(), `${what}: the connection is closed`);
      await sleep(50);
      t.notMatch(wire.received, /200 OK/, `${what}: the smuggled request is not answered`);
    }
  }
  t.equal(fake.requests.length, 0, 'nothing reached the upstream');
});

t.test('the same Content-Length twice is one length', async (t) => {
  const body = JSON.stringify({ email: 'nobody@example.test', password: 'not the password' });
  for (const lines of [[String(body.length), String(body.length)]]) {
    const wire = new Wire(gw.port);
    wire.send(
      `POST /api/dashboard/login HTTP/1.1\r\nhost: gw.test\r\ncontent-type: application/json\r\n${lines.map((l) => `content-length: ${l}\r\n`).join('')}\r\n${body}`,
    );
    const res = await wire.response(true);
    t.equal(res.status, 401, `content-length ${lines.join(' / ')}: judged as a login`);
    wire.send(request('GET', '/healthz'));
    t.equal((await wire.response(true)).status, 200, 'and the connection carries on');
    wire.close();
  }
});
