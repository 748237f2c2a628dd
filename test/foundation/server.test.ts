// The HTTP server: operations endpoints, the body size cap in each surface's envelope, unknown
// paths, and a graceful stop that lets an in-flight request finish and records its usage.

import t from 'tap';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { childEnv, startServe, waitFor } from '../helpers/child.js';
import { startTestGateway, testCatalogue } from '../helpers/gateway.js';
import { OPERATOR } from '../helpers/http.js';
import { REDIS_URL, testStores } from '../helpers/stores.js';

t.test('in-process gateway', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startTestGateway(t, { upstream: fake.url, env: { MAX_BODY_BYTES: '2048' } });
  const u = await gw.user('10');

  t.test('/healthz', async (t) => {
    const res = await fetch(`${gw.url}/healthz`);
    t.equal(res.status, 200);
    t.same(await res.json(), { status: 'ok' });
    t.match(res.headers.get('x-request-id'), /^req_[0-9a-f]{12}[0-9a-z]+$/, 'every response has a request id');
    const next = await fetch(`${gw.url}/healthz`);
    await next.arrayBuffer();
    t.not(next.headers.get('x-request-id'), res.headers.get('x-request-id'), 'and each one its own');
    const mine = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'my-id.123' } });
    await mine.arrayBuffer();
    t.equal(mine.headers.get('x-request-id'), 'my-id.123', 'a request may bring its own');
    const bad = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'has spaces & <tags>' } });
    await bad.arrayBuffer();
    t.match(bad.headers.get('x-request-id'), /^req_/, 'an unusable one is replaced');
  });

  t.test('/readyz with both stores', async (t) => {
    const res = await fetch(`${gw.url}/readyz`, { headers: OPERATOR });
    t.equal(res.status, 200);
    t.same(await res.json(), { status: 'ready', postgres: 'ok', redis: 'ok', outbox: 0, stopping: false });
  });

  t.test("body over MAX_BODY_BYTES: 413 in the surface's envelope", async (t) => {
    const big = JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: big,
    });
    t.equal(chat.status, 413);
    const chatBody = (await chat.json()) as { error: { type: string; code: string; message: string } };
    t.equal(chatBody.error.type, 'invalid_request_error');
    t.equal(chatBody.error.code, 'request_too_large');
    t.match(chatBody.error.message, /2048-byte limit/);

    const messages = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'an-model',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'y'.repeat(4000) }],
      }),
    });
    t.equal(messages.status, 413);
    const mBody = (await messages.json()) as { type: string; error: { type: string } };
    t.equal(mBody.type, 'error');
    t.equal(mBody.error.type, 'request_too_large');

    // Without a content-length (chunked), the cap applies as the bytes arrive.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${u.key}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write('x'.repeat(1000));
      req.end();
    });
    t.equal(chunked.status, 413, 'chunked body over the cap');
    t.equal(JSON.parse(chunked.body).error.code, 'request_too_large');

    // Just under the cap is read (and then judged on its merits).
    const small = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'z'.repeat(1900) }] }),
    });
    t.equal(small.status, 200, 'a body under the cap goes through');
    await small.arrayBuffer();
  });

  t.test('unknown paths: 404 JSON', async (t) => {
    for (const [method, p] of [
      ['GET', '/v1/nope'],
      ['POST', '/v1/completions'],
      ['DELETE', '/v1/chat/completions/x'],
    ]) {
      const res = await fetch(`${gw.url}${p}`, { method, headers: { authorization: `Bearer ${u.key}` } });
      t.equal(res.status, 404, `${method} ${p}`);
      t.match(res.headers.get('content-type'), /application\/json/);
      const body = (await res.json()) as { error: { message: string; type: string } };
      t.equal(body.error.type, 'invalid_request_error');
      t.match(body.error.message, p);
    }
    // Outside /v1 too: a JSON 404, not a dropped connection. (`/` is the web dashboard's:
    // test/web/static.test.ts.)
    for (const p of ['/nope', '/healthz/extra', '/favicon.ico']) {
      const res = await fetch(`${gw.url}${p}`);
      t.equal(res.status, 404, p);
      t.same(await res.json(), { error: { code: 'not_found', message: `No such endpoint: GET ${p}.` } });
    }
    const health = await fetch(`${gw.url}/healthz`);
    t.equal(health.status, 200, 'the specific routes still win over the catch-all');
    await health.arrayBuffer();
  });

  t.test('a malformed %-escape in a path parameter is answered, not fatal', async (t) => {
    for (const p of ['/v1/models/%E0%A4%A', '/v1/models/%', '/v1/models/%zz']) {
      const res = await fetch(`${gw.url}${p}`, { headers: { authorization: `Bearer ${u.key}` } });
      t.equal(res.status, 404, p);
      t.equal(((await res.json()) as { error: { code: string } }).error.code, 'model_not_found');
    }
    const anon = await fetch(`${gw.url}/v1/models/%E0%A4%A`);
    t.equal(anon.status, 401, 'without a key: refused, and still alive');
    await anon.arrayBuffer();
    const ok = await fetch(`${gw.url}/v1/models/oa-model`, { headers: { authorization: `Bearer ${u.key}` } });
    t.equal(ok.status, 200, 'the gateway keeps serving');
    t.equal(((await ok.json()) as { id: string }).id, 'oa-model');
  });

  t.test('/metrics: Prometheus text', async (t) => {
    const res = await fetch(`${gw.url}/metrics`, { headers: OPERATOR });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/plain/);
    const text = await res.text();
    t.match(text, /# TYPE airouter_http_requests_total counter/);
    t.match(text, /airouter_http_requests_total\{route="healthz",status="200"\} 5/, 'counts the five /healthz calls');
    t.match(text, /airouter_http_requests_total\{route="chat",status="413"\} 2/, 'and the refused bodies');
    t.match(text, /airouter_http_request_duration_seconds_bucket\{le="0.005",route="readyz",status="200"\}/);
    t.match(text, /process_cpu_seconds_total/, 'default process metrics');
    t.match(text, /nodejs_eventloop_lag_p99_seconds \d/, 'event-loop lag, sampled every 100 ms');
  });

  t.test('a request head over MAX_HEADER_BYTES (16 KiB): 431 from the HTTP server; under it, served', async (t) => {
    // uWS's own limit is 4 KiB; the gateway raises it to what Node's server allows.
    const under = await fetch(`${gw.url}/healthz`, { headers: { 'x-long': 'a'.repeat(12 * 1024) } });
    t.equal(under.status, 200, '12 KiB of headers');
    await under.arrayBuffer();
    const over = await fetch(`${gw.url}/healthz`, { headers: { 'x-long': 'a'.repeat(20 * 1024) } }).catch(
      (err: Error) => err,
    );
    t.equal(over instanceof Error ? 'connection closed' : over.status, 431, '20 KiB of headers');
    if (!(over instanceof Error)) await over.arrayBuffer();
    const after = await fetch(`${gw.url}/healthz`);
    t.equal(after.status, 200, 'and the server goes on');
    await after.arrayBuffer();
  });
});

t.test('graceful shutdown: SIGTERM lets the in-flight request finish and records it', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const stores = await testStores(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-shutdown-'));
  const configPath = path.join(dir, 'gateway.config.json');
  writeFileSync(configPath, JSON.stringify(testCatalogue({ upstream: fake.url })));
  const user = await createVerifiedUser(stores.sql, 'slow@example.test');
  await creditUser(stores.sql, stores.hot, user.id, 1_000_000_000n, {
    method: 'operator',
    amount: '1',
    currency: 'USD',
  });
  const { key } = await createKey(stores.sql, user.id);

  const gateway = await startServe(
    t,
    childEnv({
      DATABASE_URL: stores.databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: stores.redisPrefix,
      GATEWAY_CONFIG: configPath,
      FAKE_OPENAI_KEY: 'sk-fake',
      // Longer than the test: only the stop's own flush can write the record.
      USAGE_FLUSH_MS: '60000',
    }),
  );

  const inFlight = fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'shutdown-test-1' },
    body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'take your time [[slow:1500]]' }] }),
  });
  await waitFor(() => fake.requests.length > 0, 5000);
  const signalledAt = Date.now();
  gateway.proc.kill('SIGTERM');

  // New connections are refused while the old request finishes.
  const connect = () =>
    new Promise<string>((resolve) => {
      const req = http.get(`${gateway.url}/healthz`, { agent: false }, (res) => {
        res.resume();
        resolve(`answered ${res.statusCode}`);
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      req.setTimeout(2000, () => req.destroy(new Error('timeout')));
    });
  const refused = await waitFor(
    async () => ((await connect()) === 'ECONNREFUSED' ? 'ECONNREFUSED' : null),
    1000,
    25,
  ).catch(() => 'still accepting');
  t.equal(refused, 'ECONNREFUSED', 'the listening socket is closed at once');

  const res = await inFlight;
  t.equal(res.status, 200, 'the in-flight request completes');
  const body = (await res.json()) as {
    choices: { message: { content: string } }[];
    usage: { completion_tokens: number };
  };
  t.equal(body.choices[0].message.content, 'Hello from the fake upstream.');
  t.ok(Date.now() - signalledAt >= 1000, 'it really was still running when the signal came');

  // A repeated signal (an impatient operator) must not cut the stop short.
  gateway.proc.kill('SIGTERM');
  const exit = await gateway.stop('SIGTERM', 20_000);
  t.same(exit, { code: 0, signal: null }, 'the process exits 0');

  const rows = await stores.sql<{ status: number; cost_nano: bigint; completion_tokens: number }[]>`
    SELECT status, cost_nano, completion_tokens FROM usage_records WHERE request_id = 'shutdown-test-1'`;
  t.equal(rows.length, 1, 'its usage record is in Postgres');
  t.equal(rows[0]?.status, 200);
  t.equal(rows[0]?.completion_tokens, body.usage.completion_tokens);
  t.ok((rows[0]?.cost_nano ?? 0n) > 0n, 'and it was charged');
  const [{ balance_nano }] = await stores.sql<
    { balance_nano: bigint }[]
  >`SELECT balance_nano FROM users WHERE id = ${user.id}`;
  t.equal(balance_nano, 1_000_000_000n - (rows[0]?.cost_nano ?? 0n), 'the balance carries the charge');
});

t.test('a stopped gateway closes its idle keep-alive connections: a client pool does not hold them', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startTestGateway(t, { upstream: fake.url });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const socket = await new Promise<import('node:net').Socket>((resolve, reject) => {
    const req = http.get(`${gw.url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(req.socket!));
    });
    req.on('error', reject);
  });
  t.notOk(socket.destroyed, 'the answered connection stays open for the next request');
  const closed = new Promise<number>((resolve) => {
    const started = Date.now();
    socket.once('close', () => resolve(Date.now() - started));
  });
  await gw.stop();
  const after = await Promise.race([
    closed,
    new Promise<string>((r) => setTimeout(() => r('still open after 2 s'), 2000)),
  ]);
  t.type(after, 'number', `closed by the gateway's stop (${after})`);
});
