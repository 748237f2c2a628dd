// Fair share (issue 48): what nothing bills is bounded per key, before its body is read, and an
// early answer stops the upload; stored Responses answers are bounded per answer and per user,
// read back as the JSON text kept, and counted against the key's share when read.

import t from 'tap';
import net from 'node:net';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../helpers/clock.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway, testCatalogue, responsesUpstream } from '../helpers/gateway.js';

const MiB = 1024 * 1024;

/**
 * A POST on a raw connection of its own that sends its head and the first `head` bytes of its
 * body, then waits up to 2 s for an answer before it sends the rest: status, headers, JSON,
 * whether the answer came while the body was still unsent, and whether the server then closed
 * the connection.
 */
function post(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  head = 256 * 1024,
): Promise<{ status: number; headers: Record<string, string>; json: any; early: boolean; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const socket = net.connect(Number(u.port), u.hostname);
    const lines = [
      `POST ${u.pathname} HTTP/1.1`,
      `host: ${u.host}`,
      'content-type: application/json',
      `content-length: ${body.length}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    let got = Buffer.alloc(0);
    let restSent = false;
    let early = false;
    let done = false;
    let parsed: { status: number; headers: Record<string, string>; json: any } | undefined;
    const finish = (closedByServer: boolean) => {
      if (done || !parsed) return;
      done = true;
      clearTimeout(linger);
      socket.destroy();
      resolve({ ...parsed, early, closedByServer });
    };
    let linger: NodeJS.Timeout | undefined;
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const end = got.indexOf('\r\n\r\n');
      if (end === -1 || parsed) return;
      const [statusLine, ...rest] = got.subarray(0, end).toString('latin1').split('\r\n');
      const hs = Object.fromEntries(
        rest.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const length = Number(hs['content-length'] ?? 0);
      const check = () => {
        if (got.length - end - 4 < length) return false;
        parsed = {
          status: Number(statusLine!.split(' ')[1]),
          headers: hs,
          json: length ? JSON.parse(got.subarray(end + 4, end + 4 + length).toString('utf8')) : undefined,
        };
        early = !restSent;
        // Closed by the server within a second, or kept open.
        linger = setTimeout(() => finish(false), 1000);
        return true;
      };
      if (!check()) socket.on('data', () => void (parsed || check()));
    });
    socket.on('close', () => finish(true));
    socket.on('error', (err) => (parsed ? finish(true) : reject(err)));
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    socket.write(body.subarray(0, head));
    restSent = head >= body.length;
    const started = Date.now();
    const rest = () => {
      if (parsed) return;
      if (Date.now() - started < 2000) return void setTimeout(rest, 20);
      restSent = true;
      socket.write(body.subarray(head));
    };
    rest();
  });
}

const countBody = (bytes: number) =>
  Buffer.from(
    JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'word '.repeat(Math.floor(bytes / 5)) }] }),
  );

t.test('the defaults users get', async (t) => {
  const c = loadConfig({});
  t.equal(c.FREE_CONCURRENCY, 4);
  t.equal(c.FREE_BYTES_PER_MINUTE, 16 * MiB);
  t.equal(c.RESPONSES_STORE_MAX_BYTES, 16 * MiB);
  t.equal(c.RESPONSES_STORE_QUOTA_BYTES, 1024 * MiB);
  t.equal(loadConfig({ COUNT_TOKENS_CONCURRENCY: '7' }).FREE_CONCURRENCY, 7, 'the earlier name still sets it');
});

t.test(
  'count_tokens: a key past its share is answered 429 before its body is read; other keys are not held',
  async (t) => {
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const clock = new ManualClock();
    const gw = await startTestGateway(t, {
      upstream: fake.url,
      clock,
      env: { FREE_CONCURRENCY: '2', FREE_BYTES_PER_MINUTE: String(8 * MiB) },
    });
    const [a, b] = [await gw.user('1'), await gw.user('1')];
    const count = (key: string, body: Buffer) => post(`${gw.url}/v1/messages/count_tokens`, { 'x-api-key': key }, body);

    const big = countBody(3 * MiB);
    const answers = await Promise.all(Array.from({ length: 6 }, () => count(a.key, big)));
    const statuses = answers.map((r) => r.status);
    t.ok(statuses.filter((s) => s === 200).length <= 2, `two at a time, and 8 MiB a minute, at most (${statuses})`);
    const refused = answers.filter((r) => r.status === 429);
    t.ok(refused.length >= 4, 'the rest: 429');
    for (const r of refused) {
      t.match(r.json, { type: 'error', error: { type: 'rate_limit_error' } });
      t.ok(Number(r.headers['retry-after']) >= 1, 'with retry-after');
      t.ok(r.early, 'answered while the body was still to come');
      t.equal(r.headers.connection, 'close', 'saying the connection closes');
      t.ok(r.closedByServer, 'and closed: the rest of the body is not read');
    }
    t.equal((await count(b.key, countBody(1000))).status, 200, 'another key counts meanwhile');

    // A minute's bytes are spent: a further count waits for them to come back.
    const spent = await count(a.key, countBody(3 * MiB));
    t.equal(spent.status, 429, 'past the bytes of a minute');
    t.equal(spent.json.error.message.includes('bytes a minute'), true, spent.json.error.message);
    t.ok(Number(spent.headers['retry-after']) > 1, `retry-after says when (${spent.headers['retry-after']} s)`);
    t.equal(
      (await count(a.key, countBody(9 * MiB))).status,
      413,
      "one larger than a minute's worth: 413, never admitted",
    );
    await clock.advance(60_000);
    t.equal((await count(a.key, countBody(3 * MiB))).status, 200, 'a minute later: counted');
  },
);

t.test('a key that keeps asking when refused is answered a second late, and others are not', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const clock = new ManualClock();
  const gw = await startTestGateway(t, {
    upstream: fake.url,
    clock,
    env: { FREE_CONCURRENCY: '1', FREE_BYTES_PER_MINUTE: '4096' },
  });
  const [a, b] = [await gw.user('1'), await gw.user('1')];
  const count = (key: string, bytes: number) =>
    fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: countBody(bytes),
    });
  t.equal((await count(a.key, 3000)).status, 200, 'its minute spent');
  for (let i = 0; i < 8; i++) t.equal((await count(a.key, 3000)).status, 429, `refusal ${i + 1} of a second: at once`);
  let late: number | undefined;
  const pending = count(a.key, 3000).then((r) => (late = r.status));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(late, undefined, 'the ninth in the second waits');
  t.equal((await count(b.key, 100)).status, 200, 'another key is answered meanwhile');
  await clock.advance(1000);
  await pending;
  t.equal(late, 429, 'then refused, a second later');

  // A billed route's refusals too: a broke key asking again and again.
  const broke = await gw.user('0');
  const chat = () =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${broke.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
  for (let i = 0; i < 8; i++) t.equal((await chat()).status, 402, `402 ${i + 1} of a second: at once`);
  let broke9: number | undefined;
  const pending9 = chat().then((r) => (broke9 = r.status));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(broke9, undefined, 'the ninth 402 in the second waits');
  await clock.advance(1000);
  await pending9;
  t.equal(broke9, 402);
});

t.test('an answer given before the body is read closes the connection; a small body is read through', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startTestGateway(t, { upstream: fake.url });
  const broke = await gw.user('0');
  const chat = (bytes: number) =>
    post(
      `${gw.url}/v1/chat/completions`,
      { authorization: `Bearer ${broke.key}` },
      Buffer.from(JSON.stringify({ model: 'oa-model', messages: [{ role: 'user', content: 'x'.repeat(bytes) }] })),
    );
  const big = await chat(8 * MiB);
  t.equal(big.status, 402, 'refused for the balance');
  t.ok(big.early, 'answered while the body was still to come');
  t.ok(
    big.closedByServer && big.headers.connection === 'close',
    'and the connection closed: the 8 MB still on its way is not read',
  );
  const small = await chat(1000);
  t.equal(small.status, 402);
  t.notOk(small.closedByServer, 'a small body is read through and the connection kept');
});

t.test(
  'stored responses: bounded per answer and per user, read back as kept, each read counted against the key',
  async (t) => {
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const upstream = fake.url;
    const gw = await startTestGateway(t, {
      upstream,
      catalogue: testCatalogue({ upstream, extra: responsesUpstream(upstream) }),
      env: {
        RESPONSES_STORE_MAX_BYTES: String(1 * MiB),
        RESPONSES_STORE_QUOTA_BYTES: String(Math.floor(1.5 * MiB)),
        FREE_BYTES_PER_MINUTE: String(2 * MiB),
      },
    });
    const [u, other] = [await gw.user('10'), await gw.user('10')];
    const create = (body: Record<string, unknown>, key = u.key) =>
      fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'oa-model', input: 'hi', max_output_tokens: 16, ...body }),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
    const schema = (bytes: number) => ({
      text: {
        format: {
          type: 'json_schema',
          name: 'big',
          schema: { type: 'object', description: 'd'.repeat(bytes), properties: { a: { type: 'string' } } },
        },
      },
    });

    const tooBig = await create(schema(2 * MiB));
    t.equal(tooBig.status, 400, 'a request that would keep more than one answer may: 400');
    t.match(tooBig.json.error, { param: 'store', code: 'store_too_large' });
    t.equal((await create({ ...schema(2 * MiB), store: false })).status, 200, 'with store: false it is served');

    const first = await create(schema(600 * 1024));
    t.equal(first.status, 200);
    t.equal((await create(schema(600 * 1024))).status, 200);
    const over = await create(schema(600 * 1024));
    t.equal(over.status, 400, "past the user's quota: 400");
    t.match(over.json.error, { param: 'store', code: 'store_quota_exceeded' });
    t.equal((await create(schema(600 * 1024), other.key)).status, 200, 'another user has a quota of their own');

    // Read back: the JSON text kept, byte for byte what the answer was.
    const read = (id: string, key = u.key) =>
      fetch(`${gw.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const back = await read(first.json.id);
    t.equal(back.status, 200);
    t.same(await back.json(), first.json, 'the stored answer');
    // 2 MiB a minute for this key's reads: the second read of a 600 KB answer fits, the fourth not.
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const r = await read(first.json.id);
      await r.arrayBuffer();
      statuses.push(r.status);
    }
    t.same(statuses, [200, 200, 429], `reads past the key's bytes of a minute are refused (${statuses})`);
    t.equal((await read(first.json.id)).headers.get('retry-after') !== null, true, 'with retry-after');

    // Deleting frees the quota at once; expiry does once the sweep has run.
    const del = await fetch(`${gw.url}/v1/responses/${first.json.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${u.key}` },
    });
    t.equal(del.status, 200);
    t.equal((await create(schema(600 * 1024))).status, 200, 'room again after a delete');
    await gw.services.sql`UPDATE responses SET expires_at = now() - interval '1 second' WHERE user_id = ${u.userId}`;
    const { sweepResponses } = await import('../../src/responses/store.js');
    t.ok((await sweepResponses(gw.services.sql)) >= 2, 'the sweep deletes the expired');
    const [{ n }] = await gw.services.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM responses WHERE user_id = ${u.userId}`;
    t.equal(n, 0, 'nothing of the user is left stored');
  },
);
