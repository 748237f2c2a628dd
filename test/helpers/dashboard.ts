// Dashboard test helpers: a real SMTP sink, a small JSON client, and the signup flow.

import { readResponse } from './http.js';
import { SMTPServer } from 'smtp-server';
import net, { type AddressInfo } from 'node:net';
import tap, { type Test } from 'tap';
import { Agent, request, type Dispatcher } from 'undici';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import type { Clock } from '../../src/clock.js';
import type { Logger } from '../../src/log.js';
import { uniqueName } from './stores.js';

export interface SentMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  url: string;
  mails: SentMail[];
  /** The next mail to `to` not yet taken, waiting for it up to `timeoutMs`. */
  take(to: string, timeoutMs?: number): Promise<SentMail>;
}

export async function startSmtpSink(t: Test): Promise<SmtpSink> {
  const mails: SentMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const taken = new Set<SentMail>();
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async take(to, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = mails.find((m) => !taken.has(m) && m.to.includes(to));
        if (found) {
          taken.add(found);
          return found;
        }
        const left = until - Date.now();
        if (left <= 0) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

/** The body of a mail as text, quoted-printable undone. */
export function mailText(raw: string): string {
  const qp = /content-transfer-encoding:\s*quoted-printable/i.test(raw);
  if (!qp) return raw;
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export function verifyLinkToken(raw: string): { link: string; token: string } {
  const m = /(https?:\/\/\S+\/verify\?token=([A-Za-z0-9_-]+))/.exec(mailText(raw));
  if (!m) throw new Error(`no verification link in mail:\n${raw}`);
  return { link: m[1], token: m[2] };
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface Api {
  (
    method: string,
    path: string,
    opts?: { body?: unknown; token?: string; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  base: string;
}

/** A client for `${gw.url}/api/dashboard`; `from` picks the local address (127.0.0.x) it connects from. */
export function dashboardClient(gw: { url: string }, t: Test, from?: string): Api {
  let dispatcher: Dispatcher | undefined;
  if (from) {
    // undici's own connector ignores localAddress, so connect the socket here.
    const agent = new Agent({
      connect: (opts, cb) => {
        const socket = net.connect({ host: opts.hostname, port: Number(opts.port), localAddress: from });
        socket.once('connect', () => cb(null, socket));
        socket.once('error', (err) => cb(err, null));
      },
    });
    t.teardown(() => agent.close());
    dispatcher = agent;
  }
  const base = `${gw.url}/api/dashboard`;
  const api = (async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const url = path.startsWith('http') ? path : path.startsWith('/api/') ? gw.url + path : base + path;
    return readResponse(await request(url, { method: method as Dispatcher.HttpMethod, headers, body, dispatcher }));
  }) as Api;
  api.base = base;
  return api;
}

export interface DashboardSetup {
  gw: TestGateway;
  sink: SmtpSink;
  api: Api;
  /** The fake upstream the catalogue points at (a provider added in a test can point there too). */
  up: FakeUpstream;
}

/** Fake upstream, SMTP sink and a gateway mailing into it. */
export async function startDashboard(
  t: Test,
  env: Record<string, string> = {},
  opts: { log?: Logger; clock?: Clock } = {},
): Promise<DashboardSetup> {
  const up = await startFakeUpstream();
  t.teardown(() => up.close());
  const sink = await startSmtpSink(t);
  const gw = await startTestGateway(t, {
    upstream: up.url,
    env: { SMTP_URL: sink.url, PUBLIC_URL: 'https://dash.example.test', ...env },
    ...opts,
  });
  return { gw, sink, api: dashboardClient(gw, t), up };
}

const shared = new Map<string, Promise<DashboardSetup>>();

/**
 * One dashboard per test file for each set of settings: the tests of a file that would start
 * the same gateway share it (each signs up its own users), started on first use and stopped as
 * the file ends. For tests that leave nothing another would trip on: no rate limits filled, no
 * counts of what the gateway holds.
 */
export function sharedDashboard(env: Record<string, string> = {}): Promise<DashboardSetup> {
  const key = JSON.stringify(Object.entries(env).sort());
  let setup = shared.get(key);
  if (!setup) {
    setup = startDashboard(tap, env);
    shared.set(key, setup);
  }
  return setup;
}

export const newEmail = () => `${uniqueName('d')}@example.test`.toLowerCase();

/** register → mail → verify: a signed-up user with a session. */
export async function signUp(s: DashboardSetup, password = 'a long enough password', email = newEmail()) {
  const reg = await s.api('POST', '/register', { body: { email } });
  if (reg.status !== 202) throw new Error(`register: ${reg.status} ${reg.text}`);
  const { token } = verifyLinkToken((await s.sink.take(email)).raw);
  const ver = await s.api('POST', '/verify', { body: { token, password } });
  if (ver.status !== 200) throw new Error(`verify: ${ver.status} ${ver.text}`);
  return { email, password, userId: ver.json.user_id as string, session: ver.json.token as string };
}

/** Dashboard error envelope check. */
export function isEnvelope(r: ApiResponse): boolean {
  const e = r.json?.error;
  return (
    !!e &&
    typeof e.code === 'string' &&
    /^[a-z][a-z0-9_]*$/.test(e.code) &&
    typeof e.message === 'string' &&
    e.message.length > 0 &&
    Object.keys(r.json).length === 1
  );
}
