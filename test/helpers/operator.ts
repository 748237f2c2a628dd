// The operator's commands that every running gateway must answer (issue 33), shared by the two
// cli-running test files: the embedded default and Postgres with Redis.

import http from 'node:http';
import type { Test } from 'tap';
import type { CliResult } from './child.js';
import { lines } from './child.js';

export const KEY_RE = /^ar-[0-9A-Za-z]{40}$/;

/** One request on a fresh connection, so the kernel may hand it to any worker. */
export function getFresh(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

export async function post(url: string, body: unknown, token?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

export function ok(t: Test, r: CliResult, what: string): string[] {
  t.equal(r.code, 0, `${what}: exit 0 (${r.stderr.trim()})`);
  return lines(r.stdout);
}

export function fails(t: Test, r: CliResult, re: RegExp, what: string) {
  t.equal(r.code, 1, `${what}: exit 1`);
  t.equal(lines(r.stderr).length, 1, `${what}: one line on stderr`);
  t.match(r.stderr, re, what);
}

/** The commands every gateway must answer while it runs; returns the operator user's key. */
export async function everyCommand(t: Test, cli: (args: string[]) => Promise<CliResult>, url: string) {
  ok(t, await cli(['migrate']), 'migrate');
  t.match(
    ok(
      t,
      await cli([
        'user',
        'create',
        '--email',
        'op@example.test',
        '--balance-usd',
        '3',
        '--password',
        'op password 123',
      ]),
      'user create',
    )[0],
    /^created user op@example\.test \(/,
  );
  t.match(
    ok(t, await cli(['user', 'create', '--email', 'boss@example.test', '--admin']), 'user create --admin')[0],
    /^created admin boss@example\.test/,
  );
  fails(
    t,
    await cli(['user', 'create', '--email', 'op@example.test']),
    /a user with email op@example\.test already exists/,
    'duplicate',
  );
  t.same(ok(t, await cli(['user', 'credit', '--email', 'op@example.test', '--usd', '2.000000001']), 'user credit'), [
    'credited $2.000000001 to op@example.test; balance $5.000000001',
  ]);
  t.same(
    ok(
      t,
      await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '1.5', '--reason', 'refund reversed']),
      'user debit',
    ),
    ['debited $1.500000000 from op@example.test; balance $3.500000001'],
  );
  fails(
    t,
    await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '4']),
    /--reason is required/,
    'a debit needs a reason',
  );
  fails(
    t,
    await cli(['user', 'debit', '--email', 'op@example.test', '--usd', '4', '--reason', 'x']),
    /the balance is \$3\.500000001; a debit of \$4\.000000000 would take it below zero/i,
    'a debit past the balance',
  );
  t.same(ok(t, await cli(['user', 'promote', '--email', 'op@example.test']), 'promote'), [
    'op@example.test is now an admin',
  ]);
  t.same(ok(t, await cli(['user', 'demote', '--email', 'op@example.test']), 'demote'), [
    'op@example.test is no longer an admin',
  ]);
  const keyOut = ok(t, await cli(['key', 'create', '--email', 'op@example.test', '--name', 'ci']), 'key create');
  const key = keyOut.at(-1)!;
  t.match(key, KEY_RE, 'the key is the last line');
  const auth = { authorization: `Bearer ${key}` };
  t.equal(await getFresh(`${url}/v1/models`, auth), 200, 'the new key works at once');

  const pw = ok(t, await cli(['user', 'password', '--email', 'op@example.test']), 'user password');
  t.equal(pw.length, 2, 'the generated password is printed');
  const login = await post(`${url}/api/dashboard/login`, { email: 'op@example.test', password: pw[1] });
  t.equal(login.status, 200, 'and signs in');
  const balance = (await fetch(`${url}/api/dashboard/balance`, {
    headers: { authorization: `Bearer ${login.json.token}` },
  }).then((r) => r.json())) as { balance_usd: string };
  t.equal(balance.balance_usd, '3.500000001', 'the serving gateway sees every credit and debit');

  ok(t, await cli(['deposit', 'confirm', '--help']), 'help');
  fails(
    t,
    await cli(['deposit', 'confirm', '00000000-0000-4000-8000-000000000000']),
    /no deposit 00000000-0000-4000-8000-000000000000/,
    'deposit confirm of an unknown id',
  );
  return { key, auth, session: login.json.token as string };
}
