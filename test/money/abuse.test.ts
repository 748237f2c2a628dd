// Requests built to cost the gateway more than they pay: cheap checks come first, shapes are
// bounded before parsing, a bad header is the client's 400 and cools no route, count_tokens
// is not a free way to reach the upstream.

import { spawn } from 'node:child_process';
import net from 'node:net';
import t from 'tap';
import { hashSecret } from '../../src/accounts/keys.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { waitFor } from '../helpers/child.js';
import { startTestGateway } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url, env: { ROUTE_COOLDOWN_MS: '60000' } });

const post = (path: string, key: string, body: string | Buffer | object, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });

/**
 * Polls /healthz every 10 ms from a process of its own while `work` runs, and returns the
 * slowest answer: the gateway shares this process's event loop, so its timer would not say.
 */
async function healthzDuring(work: () => Promise<unknown>): Promise<number> {
  const poller = spawn(
    process.execPath,
    [
      '-e',
      `
    let slowest = 0;
    const tick = async () => {
      const started = performance.now();
      await (await fetch(${JSON.stringify(gw.url + '/healthz')})).arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
      if (!ready) { ready = true; process.stdout.write('ready\\n'); }
      setTimeout(tick, 10);
    };
    let ready = false;
    tick();
    process.stdin.on('data', () => { process.stdout.write(String(slowest)); process.exit(0); });
  `,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH } },
  );
  let text = '';
  poller.stdout.on('data', (d: Buffer) => (text += d));
  await waitFor(() => text.startsWith('ready'), 5000);
  await work();
  const exited = new Promise((resolve) => poller.on('exit', resolve));
  poller.stdin.write('x');
  await exited;
  return Number(text.slice('ready\n'.length));
}

/**
 * Posts `copies` of the body `bodyJs` evaluates to, all at once, from a process of its own: the
 * gateway runs in this one, so uploading from here would put the client's work on the event
 * loop whose latency /healthz measures. Each answer's status, the first one's JSON, and how long
 * all of them took.
 */
async function uploadFromChild(
  key: string,
  bodyJs: string,
  copies: number,
): Promise<{ statuses: number[]; first: unknown; ms: number; bytes: number }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
    const body = Buffer.from(${bodyJs});
    const one = () => fetch(${JSON.stringify(gw.url + '/v1/chat/completions')}, {
      method: 'POST', headers: { authorization: ${JSON.stringify('Bearer ' + key)}, 'content-type': 'application/json' }, body,
    });
    const started = performance.now();
    Promise.all(Array.from({ length: ${copies} }, one)).then(async (answers) => {
      const ms = performance.now() - started;
      const first = await answers[0].json().catch(() => null);
      process.stdout.write(JSON.stringify({ statuses: answers.map((r) => r.status), first, ms, bytes: body.length }));
    });
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH } },
  );
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d));
  await new Promise((resolve) => child.on('exit', resolve));
  return JSON.parse(text);
}

const MANY = `JSON.stringify({ model: 'oa-model', messages: Array.from({ length: 500_000 }, () => ({ role: 'user', content: 'hi' })) })`;

t.test('a 14 MB body of 500k messages from a zero-balance key: 402 in milliseconds, /healthz stays fast', async (t) => {
  const poor = await gw.user('0');
  let up!: Awaited<ReturnType<typeof uploadFromChild>>;
  let cpuMs = 0;
  const slowest = await healthzDuring(async () => {
    const before = process.cpuUsage();
    up = await uploadFromChild(poor.key, MANY, 5);
    const used = process.cpuUsage(before);
    cpuMs = (used.user + used.system) / 1000;
  });
  const { statuses, first, ms } = up;
  t.ok(up.bytes > 14_000_000, `${(up.bytes / 1e6).toFixed(1)} MB`);
  t.same(statuses, [402, 402, 402, 402, 402], 'refused for the balance, before any parsing');
  t.match(first, { error: { code: 'insufficient_balance' } });
  t.ok(ms < 5000, `five of them in ${ms.toFixed(0)} ms (mostly uploading 70 MB)`);
  // Parsing and validating these bodies took 1.2 s of CPU each. The gateway is this process and
  // the client another, so this process's CPU time is the gateway's: unlike a latency, it does
  // not grow with what else the machine's cores are running.
  t.ok(cpuMs < 2500, `the gateway spent ${cpuMs.toFixed(0)} ms of CPU on the five: none was parsed`);
  // On a quiet machine /healthz is answered in tens of ms meanwhile; the margin is for shared
  // CI cores, where receiving 70 MB alone has taken over a second.
  t.ok(slowest < 2000, `/healthz answered within ${slowest.toFixed(1)} ms meanwhile`);
});

t.test('the same body from a funded key: refused for its shape before it is parsed', async (t) => {
  const rich = await gw.user('100');
  let up!: Awaited<ReturnType<typeof uploadFromChild>>;
  const slowest = await healthzDuring(async () => {
    up = await uploadFromChild(rich.key, MANY, 1);
  });
  t.same(up.statuses, [400]);
  const body = up.first as { error: { message: string } };
  t.match(body, { error: { type: 'invalid_request_error', code: 'body_too_complex' } });
  t.match(body.error.message, /MAX_JSON_CONTAINERS/);
  t.ok(slowest < 2000, `/healthz answered within ${slowest.toFixed(1)} ms meanwhile`);

  const many = await post('/v1/chat/completions', rich.key, {
    model: 'oa-model',
    messages: Array.from({ length: 20_001 }, () => ({ role: 'user', content: 'hi' })),
  });
  t.equal(many.status, 400);
  t.match(await many.json(), { error: { param: 'messages', code: 'too_many_messages' } });
});

t.test('100,000 nested [ in an extra field: a 400, not a 502', async (t) => {
  const rich = await gw.user('1');
  const deep = `{"model":"oa-model","messages":[{"role":"user","content":"hi"}],"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  const res = await post('/v1/chat/completions', rich.key, deep);
  t.equal(res.status, 400);
  t.match(await res.json(), { error: { code: 'body_too_deep', message: /64 levels deep \(MAX_JSON_DEPTH\)/ } });
  const onMessages = await post('/v1/messages', rich.key, deep.replace('"oa-model"', '"an-model","max_tokens":5'));
  t.equal(onMessages.status, 400);
  t.match(await onMessages.json(), { type: 'error', error: { type: 'invalid_request_error' } });
});

/** A request written by hand: fetch refuses to send an invalid header value. */
function rawRequest(path: string, headers: string[], body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(gw.port, '127.0.0.1');
    let data = '';
    s.on('data', (d) => (data += d.toString('latin1')));
    s.on('error', reject);
    s.on('end', () => resolve({ status: Number(data.split(' ')[1]), text: data.slice(data.indexOf('\r\n\r\n') + 4) }));
    s.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n${headers.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      'latin1',
    );
  });
}

t.test('anthropic-beta with a control character: a 400, and no route cools down', async (t) => {
  const a = await gw.user('1');
  const b = await gw.user('1');
  const body = JSON.stringify({ model: 'an-model', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
  fake.reset();
  const bad = await rawRequest('/v1/messages', [`x-api-key: ${a.key}`, 'anthropic-beta: a\x7fb'], body);
  t.equal(bad.status, 400);
  t.match(JSON.parse(bad.text), { type: 'error', error: { type: 'invalid_request_error', message: /anthropic-beta/ } });
  const version = await rawRequest('/v1/messages', [`x-api-key: ${a.key}`, 'anthropic-version: yesterday'], body);
  t.equal(version.status, 400);
  t.equal(fake.requests.length, 0, 'nothing reached the upstream');
  const other = await post('/v1/messages', b.key, body);
  t.equal(other.status, 200, 'another user is served');
  const metrics = await gw.metrics();
  t.notMatch(
    metrics,
    /airouter_upstream_attempts_total\{route="fake-anthropic\/upstream-an",outcome="(?:connect_error|timeout)"\}/,
    'no route failure was recorded',
  );
});

t.test("count_tokens needs a positive balance and counts against the key's rpm", async (t) => {
  const poor = await gw.user('0');
  fake.reset();
  const body = { model: 'an-model', messages: [{ role: 'user', content: 'count me' }] };
  const refused = await post('/v1/messages/count_tokens', poor.key, body);
  t.equal(refused.status, 402);
  t.match(await refused.json(), { type: 'error', error: { type: 'billing_error' } });
  t.equal(fake.requests.length, 0, 'the upstream was not asked');

  const limited = await gw.user('1');
  await gw.stores.sql`UPDATE api_keys SET rpm_limit = 2 WHERE id = ${limited.keyId}`;
  await gw.services.keys.changed(hashSecret(limited.key), limited.userId);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await post('/v1/messages/count_tokens', limited.key, body);
    statuses.push(r.status);
    if (r.status === 429) t.ok(Number(r.headers.get('retry-after')) >= 1, 'with retry-after');
    await r.arrayBuffer();
  }
  // A minute boundary may fall inside the loop: then one more passes.
  t.ok(statuses.filter((s) => s === 200).length <= 3 && statuses.includes(429), `two a minute, then 429 (${statuses})`);
  const chat = await post('/v1/chat/completions', limited.key, {
    model: 'oa-model',
    messages: [{ role: 'user', content: 'hi' }],
  });
  t.ok([200, 429].includes(chat.status), 'the same count applies to completions');
  await chat.arrayBuffer();
  await gw.services.outbox.drained();
  t.equal((await reconcile(gw.stores.sql, gw.stores.hot)).ok, true, 'the ledger reconciles');
});
