// Login attempts are limited per client address and per address and email (LOGIN_MAX_ATTEMPTS in
// LOGIN_WINDOW_S), and per email at ten times that. Clients connect from different loopback
// addresses (127.x.y.z) so the limits can be told apart.

import t from 'tap';
import net from 'node:net';
import { loadConfig } from '../../src/config.js';
import { parseProxyRule, TrustedProxies } from '../../src/server/client-address.js';
import { clientOf, EMAIL_FACTOR, emailTag } from '../../src/dashboard/auth.js';
import { dashboardClient, newEmail, signUp, startDashboard } from '../helpers/dashboard.js';

const MAX = 4;

t.test('a flood from one address does not lock the owner out from another', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const attacker = dashboardClient(s.gw, t, '127.0.0.2');
  for (let i = 0; i < MAX; i++) {
    const r = await attacker('POST', '/login', { body: { email: u.email, password: `guess number ${i}` } });
    t.equal(r.status, 401, `guess ${i + 1} is judged`);
  }
  for (let i = 0; i < 5 * MAX; i++) {
    const blocked = await attacker('POST', '/login', { body: { email: u.email, password: `flood ${i}` } });
    t.equal(blocked.status, 429, `flood ${i + 1} is refused`);
    t.equal(blocked.json.error.code, 'too_many_attempts');
    const retry = Number(blocked.headers['retry-after']);
    t.ok(retry >= 1 && retry <= 600, `retry-after ${retry}`);
  }
  t.equal(
    (await attacker('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status,
    429,
    'even the right password waits at that address',
  );

  // The owner, elsewhere, gets in: the flood counted against its address, not the account.
  const owner = dashboardClient(s.gw, t, '127.0.0.3');
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200);
  t.equal(
    (await owner('POST', '/login', { body: { email: u.email, password: 'one typo' } })).status,
    401,
    'and may still mistype',
  );
});

t.test(`per email: ${EMAIL_FACTOR}× the threshold, over every address together`, async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: '2', LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  // Twenty addresses, two guesses each: each within its own limits, 40 for the account.
  for (let a = 1; a <= EMAIL_FACTOR; a++) {
    const c = dashboardClient(s.gw, t, `127.0.1.${a}`);
    for (let i = 0; i < 2; i++)
      t.equal((await c('POST', '/login', { body: { email: u.email, password: `guess ${a}.${i}` } })).status, 401);
  }
  const next = dashboardClient(s.gw, t, '127.0.2.1');
  const blocked = await next('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(blocked.status, 429, 'past 10× the threshold the account itself waits');
  t.ok(Number(blocked.headers['retry-after']) >= 1);
  // Other accounts from that address are unaffected.
  const v = await signUp(s, 'another good password');
  t.equal((await next('POST', '/login', { body: { email: v.email, password: 'another good password' } })).status, 200);

  // The window ends (simulated by clearing the counter): the owner gets in, and that clears it.
  await s.gw.services.hot.resetHits(`login:e:${emailTag(u.email)}`);
  const owner = dashboardClient(s.gw, t, '127.0.2.2');
  t.equal((await owner('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status, 200);
});

t.test('IPv6 clients are counted by /64; IPv4 on a dual-stack socket by its IPv4 address', async (t) => {
  t.equal(clientOf('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  t.equal(clientOf('2001:0DB8:0001:0002:aaaa::'), '2001:db8:1:2::/64');
  t.equal(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(clientOf('0000:0000:0000:0000:0000:ffff:7f00:0002'), '127.0.0.2');
  t.equal(clientOf('::ffff:127.0.0.2'), '::ffff:127.0.0.2');
  t.equal(clientOf('127.0.0.2'), '127.0.0.2');
});

t.test('per address', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const sprayer = dashboardClient(s.gw, t, '127.0.0.4');
  for (let i = 0; i < MAX; i++) {
    const r = await sprayer('POST', '/login', { body: { email: newEmail(), password: 'password123' } });
    t.equal(r.status, 401);
  }
  const blocked = await sprayer('POST', '/login', { body: { email: u.email, password: 'the right password' } });
  t.equal(blocked.status, 429, 'a fresh email from the same address is refused too');
  t.ok(Number(blocked.headers['retry-after']) >= 1);
  const elsewhere = dashboardClient(s.gw, t, '127.0.0.5');
  t.equal(
    (await elsewhere('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status,
    200,
    'the account itself is fine',
  );
});

t.test('a burst of parallel guesses is held to the limit', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const burst = dashboardClient(s.gw, t, '127.0.0.6');
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      burst('POST', '/login', { body: { email: u.email, password: `parallel guess ${i}` } }),
    ),
  );
  t.equal(results.filter((r) => r.status === 401).length, MAX, 'only MAX guesses were judged');
  t.equal(results.filter((r) => r.status === 429).length, 12 - MAX);
});

t.test('signup requests are limited the same way', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const email = newEmail();
  const c = dashboardClient(s.gw, t, '127.0.0.7');
  for (let i = 0; i < MAX; i++) t.equal((await c('POST', '/register', { body: { email } })).status, 202);
  const r = await c('POST', '/register', { body: { email } });
  t.equal(r.status, 429);
  t.ok(Number(r.headers['retry-after']) >= 1);
});

t.test('only failures count: logins that succeed are never limited', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const c = dashboardClient(s.gw, t, '127.0.0.10');
  for (let i = 0; i < 3 * MAX; i++) {
    t.equal(
      (await c('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status,
      200,
      `login ${i + 1}`,
    );
  }
  // A mistyped password between good ones is one failure, not one more on top of the logins.
  for (let i = 0; i < MAX - 1; i++)
    t.equal((await c('POST', '/login', { body: { email: newEmail(), password: `typo ${i}` } })).status, 401);
  t.equal(
    (await c('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status,
    200,
    'after MAX-1 failures, still in',
  );
  // Wrong passwords are still held to MAX, counting the ones before the last login.
  t.equal((await c('POST', '/login', { body: { email: newEmail(), password: 'the last free guess' } })).status, 401);
  const blocked = await c('POST', '/login', { body: { email: newEmail(), password: 'one too many' } });
  t.equal(blocked.status, 429, 'the next failure past MAX is refused');
});

t.test('a burst of guesses at many emails from one address is held to the address limit', async (t) => {
  const s = await startDashboard(t, { LOGIN_MAX_ATTEMPTS: String(MAX), LOGIN_WINDOW_S: '600' });
  const u = await signUp(s, 'the right password');
  const c = dashboardClient(s.gw, t, '127.0.0.11');
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      c('POST', '/login', { body: { email: newEmail(), password: `parallel ${i}` } }),
    ),
  );
  t.equal(results.filter((r) => r.status === 401).length, MAX, 'only MAX guesses were judged, racing or not');
  t.equal(
    (await c('POST', '/login', { body: { email: u.email, password: 'the right password' } })).status,
    429,
    'the address waits',
  );
});

t.test('behind a trusted proxy, each forwarded client has its own buckets', async (t) => {
  // 127.0.0.12 is the proxy; a CIDR block holds it.
  const s = await startDashboard(t, {
    LOGIN_MAX_ATTEMPTS: String(MAX),
    LOGIN_WINDOW_S: '600',
    TRUST_PROXY: '10.9.9.9, 127.0.0.8/29, 2001:db8::/32',
  });
  const u = await signUp(s, 'the right password');
  const proxy = dashboardClient(s.gw, t, '127.0.0.12');
  const as = (xff: string) => ({ 'x-forwarded-for': xff });
  for (let i = 0; i < MAX; i++) {
    t.equal(
      (await proxy('POST', '/login', { body: { email: u.email, password: `guess ${i}` }, headers: as('203.0.113.7') }))
        .status,
      401,
    );
  }
  t.equal(
    (await proxy('POST', '/login', { body: { email: u.email, password: 'flood' }, headers: as('203.0.113.7') })).status,
    429,
    'the guesser waits',
  );
  const other = await proxy('POST', '/login', {
    body: { email: u.email, password: 'the right password' },
    headers: as('203.0.113.8'),
  });
  t.equal(other.status, 200, 'another client through the same proxy does not');
  // Entries left of the first untrusted one are the client's to write: a guesser cannot dodge
  // its bucket by putting fresh addresses there.
  const dodge = await proxy('POST', '/login', {
    body: { email: u.email, password: 'dodge' },
    headers: as('198.51.100.1, 203.0.113.7'),
  });
  t.equal(dodge.status, 429, 'spoofed leftmost entries are not the client');
  // A trusted hop in the chain (another proxy of ours) is walked past.
  const via = await proxy('POST', '/login', {
    body: { email: u.email, password: 'dodge' },
    headers: as('203.0.113.7, 10.9.9.9'),
  });
  t.equal(via.status, 429, 'the address left of a trusted hop is the client');
  // Two X-Forwarded-For lines are one list, in order (net.Socket: undici would merge them).
  const raw = await rawLogin(
    s.gw.url,
    { email: u.email, password: 'split' },
    ['x-forwarded-for: 198.51.100.2', 'x-forwarded-for: 203.0.113.7'],
    '127.0.0.12',
  );
  t.match(raw, /^HTTP\/1\.1 429 /, 'split over two header lines, the last entry still names the client');
  // IPv6 clients behind the proxy are counted by /64.
  for (let i = 0; i < MAX; i++) {
    t.equal(
      (
        await proxy('POST', '/login', {
          body: { email: newEmail(), password: `v6 ${i}` },
          headers: as(`2a00:1450:4001:81c::${i + 1}`),
        })
      ).status,
      401,
    );
  }
  t.equal(
    (
      await proxy('POST', '/login', {
        body: { email: newEmail(), password: 'v6 next' },
        headers: as('[2a00:1450:4001:81c::99]:4431'),
      })
    ).status,
    429,
    'the same /64, written with a port',
  );
});

t.test("an untrusted peer's X-Forwarded-For is ignored", async (t) => {
  const s = await startDashboard(t, {
    LOGIN_MAX_ATTEMPTS: String(MAX),
    LOGIN_WINDOW_S: '600',
    TRUST_PROXY: '127.0.0.12',
  });
  const u = await signUp(s, 'the right password');
  const c = dashboardClient(s.gw, t, '127.0.0.13');
  for (let i = 0; i < MAX; i++) {
    const r = await c('POST', '/login', {
      body: { email: u.email, password: `guess ${i}` },
      headers: { 'x-forwarded-for': `198.51.100.${i + 10}` },
    });
    t.equal(r.status, 401);
  }
  const r = await c('POST', '/login', {
    body: { email: newEmail(), password: 'x' },
    headers: { 'x-forwarded-for': '198.51.100.99' },
  });
  t.equal(r.status, 429, 'a fresh forwarded address per guess does not make a fresh bucket');
});

t.test('TRUST_PROXY: addresses, CIDR blocks, IPv4 and IPv6, walked from the right', async (t) => {
  const p = new TrustedProxies(['10.0.0.0/8', '192.0.2.1', '2001:db8:a::/48', '::1', '::ffff:172.16.0.0/108']);
  t.equal(p.client('10.200.3.4', '203.0.113.5'), '203.0.113.5', 'a peer inside a /8');
  t.equal(p.client('11.0.0.1', '203.0.113.5'), '11.0.0.1', 'a peer outside it: the header is ignored');
  t.equal(p.client('192.0.2.1', '203.0.113.5'), '203.0.113.5', 'a single address');
  t.equal(p.client('192.0.2.2', '203.0.113.5'), '192.0.2.2', 'its neighbour is not trusted');
  t.equal(p.client('2001:db8:a:ffff::1', '203.0.113.5'), '203.0.113.5', 'an IPv6 peer inside a /48');
  t.equal(p.client('2001:db8:b::1', '203.0.113.5'), '2001:db8:b::1', 'outside it');
  t.equal(p.client('0000:0000:0000:0000:0000:0000:0000:0001', '203.0.113.5'), '203.0.113.5', '::1 as uWS writes it');
  t.equal(
    p.client('0000:0000:0000:0000:0000:ffff:0a01:0203', '203.0.113.5'),
    '203.0.113.5',
    'a mapped IPv4 peer matches the IPv4 block',
  );
  t.equal(p.client('172.16.9.9', '203.0.113.5'), '203.0.113.5', 'a mapped IPv6 block is its IPv4 block');
  t.equal(p.client('172.32.0.1', '203.0.113.5'), '172.32.0.1');
  t.equal(
    p.client('10.0.0.1', '198.51.100.1, 203.0.113.5, 10.1.1.1, 192.0.2.1'),
    '203.0.113.5',
    'trusted hops skipped from the right',
  );
  t.equal(p.client('10.0.0.1', '10.0.0.2, 10.0.0.3'), '10.0.0.2', 'all trusted: the farthest hop');
  t.equal(p.client('10.0.0.1', 'unknown, 10.0.0.3'), '10.0.0.3', 'garbage ends the walk at the hop that passed it on');
  t.equal(p.client('10.0.0.1', ''), '10.0.0.1', 'no header: the peer');
  t.equal(p.client('10.0.0.1', '203.0.113.5:8080'), '203.0.113.5', 'an IPv4 entry with a port');
  t.equal(p.client('10.0.0.1', '[2001:db8:c::7]:443'), '2001:db8:c::7', 'a bracketed IPv6 entry with a port');
  t.equal(p.client('10.0.0.1', '::FFFF:203.0.113.9'), '203.0.113.9', 'a mapped IPv4 entry');
  t.equal(new TrustedProxies([]).client('10.0.0.1', '203.0.113.5'), '10.0.0.1', 'nothing trusted');
  for (const bad of ['10.0.0.0/33', '2001:db8::/129', 'proxy.local', '10.0.0.1:80', '10.0.0.0/8/1', '10.0.0.0/x'])
    t.equal(parseProxyRule(bad), undefined, `${bad} is refused`);
  t.throws(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,proxy.local' }), /TRUST_PROXY must be a comma-separated list/);
  t.same(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8 , ::1 ' }).TRUST_PROXY, ['10.0.0.0/8', '::1']);
  t.same(loadConfig({}).TRUST_PROXY, [], 'off by default');
});

/** A login over a raw socket from `from`, with header lines of its own. */
function rawLogin(url: string, body: object, lines: string[], from: string): Promise<string> {
  const { port } = new URL(url);
  const json = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port), localAddress: from });
    let got = '';
    socket.on('data', (d) => {
      got += d;
      if (/\r\n\r\n/.test(got)) socket.end();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.write(
      `POST /api/dashboard/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n${json}`,
    );
  });
}
