// Fair share under hostile load: while one customer attacks with requests that cost it nothing
// or nearly nothing, what do the others see? A probe, in a process of its own so that the
// attacker's client work does not delay it, measures another client's GET /healthz (a fresh
// connection each) and another key's small chat completion (a keep-alive client, as SDKs run)
// during each attack, against the same probe on the idle gateway.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 \
//     npm run bench:fair-share -- [--seconds N] [--attacks idle,count-tokens,...] [--workers N]
//
// Attacks (each alone, for --seconds, from a process at nice 19: see attackChild):
//   count-tokens   16 clients of one funded key loop POST /v1/messages/count_tokens of 15 MB
//   responses-get  one POST /v1/responses storing an 8 MB text.format schema at max_output_tokens
//                  1, then 16 clients loop GET /v1/responses/{id}
//   playground     a zero-balance account's 20 clients loop POST /api/dashboard/playground
//   refused        16 clients of a zero-balance key loop a 14 MB POST /v1/chat/completions
// The gateway runs as deployed (bench/lib/gateway.ts), on the bench's stores (bench/lib/stores.ts).
// The report (stdout, and bench/reports/fair-share-<time>.{json,md}) gives, per attack, the probe's
// p50/p99/max, what the attacker was answered, and what it left behind in Postgres.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { Agent, request } from 'undici';
import { runCommand, stopAll } from './lib/children.js';
import { createAccount, GatewayProcess, gatewayEntry, STATIC_MODEL, writeCatalogue } from './lib/gateway.js';
import { freePort, sleep } from './lib/http.js';
import { Samples, type Summary } from './lib/stats.js';
import { startUpstream } from './lib/servers.js';
import { prepareStores } from './lib/stores.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..');
const ATTACKS = ['idle', 'count-tokens', 'responses-get', 'playground', 'refused'] as const;
type Attack = (typeof ATTACKS)[number];

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i === -1 ? undefined : args[i + 1];
}

const SECONDS = Number(option('seconds') ?? 10);
const WORKERS = Number(option('workers') ?? 2);
const CHOSEN = (option('attacks')?.split(',') ?? ATTACKS) as Attack[];
for (const a of CHOSEN)
  if (!ATTACKS.includes(a)) throw new Error(`unknown attack "${a}": one of ${ATTACKS.join(', ')}`);

const say = (line: string) => process.stderr.write(`[fair-share] ${line}\n`);

interface Outcome {
  attack: Attack;
  healthz: Summary;
  chat: Summary;
  probeErrors: number;
  attacker: Record<string, number>;
  left: Record<string, number>;
}

/** The probe: /healthz on a fresh connection every 20 ms, a small chat on a keep-alive client every 100 ms. */
async function probe(
  url: string,
  key: string,
  until: number,
): Promise<{ healthz: Samples; chat: Samples; errors: number }> {
  const healthz = new Samples();
  const chat = new Samples();
  let errors = 0;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  const timed = async (samples: Samples, run: () => Promise<number>) => {
    const t0 = performance.now();
    try {
      const status = await run();
      if (status !== 200) errors++;
    } catch {
      errors++;
    }
    samples.add(performance.now() - t0);
  };
  const healthLoop = async () => {
    while (Date.now() < until) {
      const next = sleep(20);
      await timed(healthz, async () => {
        const res = await request(`${url}/healthz`, {
          headers: { connection: 'close' },
          reset: true,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        await res.body.dump();
        return res.statusCode;
      });
      await next;
    }
  };
  const body = JSON.stringify({ model: STATIC_MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
  const chatLoop = async () => {
    while (Date.now() < until) {
      const next = sleep(100);
      await timed(chat, async () => {
        const res = await request(`${url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          body,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        });
        await res.body.dump();
        return res.statusCode;
      });
      await next;
    }
  };
  await Promise.all([healthLoop(), chatLoop()]);
  await agent.close();
  return { healthz, chat, errors };
}

/** The probe in a child process: its samples' summaries, printed as JSON. */
async function probeChild(
  url: string,
  key: string,
  until: number,
): Promise<{ healthz: Summary; chat: Summary; errors: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--probe', url, key, String(until)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the probe exited with ${code}`);
  return JSON.parse(out) as { healthz: Summary; chat: Summary; errors: number };
}

interface AttackTarget {
  url: string;
  /** A funded key, and a zero-balance account's key and dashboard session. */
  key: string;
  brokeKey: string;
  session: string;
  until: number;
}

/**
 * The attack in a child process of its own at the lowest CPU priority (nice 19): on a machine
 * of two cores the attacker's own uploads would otherwise take the cores from the gateway, and
 * this is about the gateway's share, as if the attacker were elsewhere. The statuses it got, as JSON.
 */
async function attackChild(attack: Attack, target: AttackTarget): Promise<Record<string, number>> {
  const child = spawn(
    'nice',
    ['-n', '19', process.execPath, '--import', 'tsx', import.meta.filename, '--attack', attack, JSON.stringify(target)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the attacker exited with ${code}`);
  return JSON.parse(out) as Record<string, number>;
}

/** The attacker's side: `attack` on `target` until its time is up. */
async function attack(
  kind: Attack,
  { url, key, brokeKey, session, until }: AttackTarget,
): Promise<Record<string, number>> {
  if (kind === 'count-tokens') {
    const body = Buffer.from(
      JSON.stringify({ model: STATIC_MODEL, messages: [{ role: 'user', content: 'word '.repeat(3_000_000) }] }),
    );
    return flood(
      16,
      until,
      async () =>
        (await post(`${url}/v1/messages/count_tokens`, body, { 'x-api-key': key, 'anthropic-version': '2023-06-01' }))
          .status,
    );
  }
  if (kind === 'responses-get') {
    const schema = { type: 'object', description: 'd'.repeat(8_000_000), properties: { a: { type: 'string' } } };
    const made = await post(
      `${url}/v1/responses`,
      JSON.stringify({
        model: STATIC_MODEL,
        input: 'hi',
        max_output_tokens: 1,
        text: { format: { type: 'json_schema', name: 'big', schema } },
      }),
      { authorization: `Bearer ${key}` },
    );
    const id = (JSON.parse(made.text) as { id?: string }).id;
    say(
      `responses-get: the 8 MB response was answered ${made.status}${id ? `, ${id}` : `: ${made.text.slice(0, 200)}`}`,
    );
    return flood(16, until, async () => {
      const res = await request(`${url}/v1/responses/${id}`, {
        headers: { authorization: `Bearer ${key}` },
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
      await res.body.dump();
      return res.statusCode;
    });
  }
  if (kind === 'playground') {
    return flood(
      20,
      until,
      async () =>
        (
          await post(`${url}/api/dashboard/playground`, JSON.stringify({ model: STATIC_MODEL, prompt: 'hi' }), {
            authorization: `Bearer ${session}`,
          })
        ).status,
    );
  }
  const body = Buffer.from(
    JSON.stringify({ model: STATIC_MODEL, messages: [{ role: 'user', content: 'x'.repeat(14_000_000) }] }),
  );
  return flood(
    16,
    until,
    async () => (await post(`${url}/v1/chat/completions`, body, { authorization: `Bearer ${brokeKey}` })).status,
  );
}

/** `clients` loops of `send` until `until`, counting the statuses (or error names) they got. */
async function flood(clients: number, until: number, send: () => Promise<number>): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  const one = async () => {
    while (Date.now() < until) {
      let what: string;
      try {
        what = String(await send());
      } catch (err) {
        what = (err as Error).name || 'error';
        await sleep(50);
      }
      seen[what] = (seen[what] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: clients }, one));
  return seen;
}

async function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await request(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const ms = (x: number | null) => (x === null ? '–' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
const statuses = (o: Record<string, number>) =>
  Object.entries(o)
    .sort()
    .map(([k, n]) => `${k}×${n}`)
    .join(' ') || '–';

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'airouter-fair-'));
  const stores = await prepareStores({
    databaseUrl: process.env.DATABASE_URL || undefined,
    redisUrl: process.env.REDIS_URL || undefined,
    adminUrl: process.env.BENCH_DATABASE_ADMIN_URL,
    dataDir: path.join(tmp, 'data'),
  });
  const embedded = stores.kind.sql === 'embedded';
  const workers = embedded || stores.kind.hot === 'embedded' ? 1 : WORKERS;
  say(`gateway on ${stores.description}, ${workers} worker(s), ${SECONDS} s an attack`);
  try {
    const { url: stat } = await startUpstream('static', tmp);
    const catalogue = path.join(tmp, 'gateway.config.json');
    writeCatalogue(catalogue, { fake: stat, static: stat });
    const env = { ...stores.env, GATEWAY_CONFIG: catalogue, LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '3000' };
    const entry = await gatewayEntry(REPO_ROOT);
    const gwOpts = { dir: tmp, root: REPO_ROOT, entry: entry.file, env, workers, log: say };
    const stamp = Date.now().toString(36);
    const attackerKey = await createAccount(gwOpts, `attacker-${stamp}@bench.invalid`);
    const victimKey = await createAccount(gwOpts, `victim-${stamp}@bench.invalid`);
    // A zero-balance account: its key, and a dashboard password for the playground.
    const broke = `broke-${stamp}@bench.invalid`;
    const password = 'bench password 123';
    const cli = (args: string[]) =>
      runCommand(process.execPath, [entry.file, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    await cli(['user', 'create', '--email', broke, '--password', password]);
    const brokeKey = (await cli(['key', 'create', '--email', broke, '--name', 'bench'])).stdout
      .trim()
      .split('\n')
      .pop()!
      .trim();
    const gateway = new GatewayProcess(gwOpts, await freePort());
    await gateway.start();
    const url = gateway.url;
    const session = JSON.parse(
      (await post(`${url}/api/dashboard/login`, JSON.stringify({ email: broke, password }), {})).text,
    ).token as string;
    const sql = embedded ? undefined : postgres(stores.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    const rows = async () => {
      if (!sql) return {};
      const [r] = await sql<{ keys: number; refusals: number; responses: number; response_mb: number }[]>`
        SELECT (SELECT count(*)::int FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.email = ${broke}) AS keys,
               (SELECT count(*)::int FROM refused_requests) AS refusals,
               (SELECT count(*)::int FROM responses) AS responses,
               (SELECT coalesce(sum(pg_column_size(r.*)), 0)::float8 / 1048576 FROM responses r) AS response_mb`;
      return r as unknown as Record<string, number>;
    };

    const outcomes: Outcome[] = [];
    for (const attack of CHOSEN) {
      const before = await rows();
      const until = Date.now() + SECONDS * 1000;
      const attacker =
        attack === 'idle'
          ? Promise.resolve({})
          : attackChild(attack, { url, key: attackerKey, brokeKey, session, until });
      // The probe starts once the attack is under way.
      await sleep(attack === 'idle' ? 0 : 500);
      const seen = await probeChild(url, victimKey, until);
      const after = await rows();
      const left = Object.fromEntries(
        Object.entries(after).map(([k, v]) => [k, Math.round((v - (before[k] ?? 0)) * 100) / 100]),
      );
      const outcome: Outcome = {
        attack,
        healthz: seen.healthz,
        chat: seen.chat,
        probeErrors: seen.errors,
        attacker: await attacker,
        left,
      };
      outcomes.push(outcome);
      say(
        `${attack}: /healthz p99 ${ms(outcome.healthz.p99)} ms, chat p99 ${ms(outcome.chat.p99)} ms; attacker ${statuses(outcome.attacker)}`,
      );
      await sleep(1000);
    }
    await sql?.end();

    const lines = [
      `# Fair share under hostile load (${new Date().toISOString()})`,
      '',
      `Gateway on ${stores.description}, ${workers} worker(s); each attack ${SECONDS} s; \`node --import tsx bench/fair-share.ts\`.`,
      '',
      '| attack | /healthz p50 / p99 / max, ms | chat p50 / p99 / max, ms | probe errors | attacker answered | left in Postgres |',
      '|---|---|---|---|---|---|',
      ...outcomes.map(
        (o) =>
          `| ${o.attack} | ${ms(o.healthz.p50)} / ${ms(o.healthz.p99)} / ${ms(o.healthz.max)} | ${ms(o.chat.p50)} / ${ms(o.chat.p99)} / ${ms(o.chat.max)} | ${o.probeErrors} | ${statuses(o.attacker)} | ${statuses(o.left)} |`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const dir = path.join(REPO_ROOT, 'bench', 'reports');
    mkdirSync(dir, { recursive: true });
    const base = path.join(dir, `fair-share-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    writeFileSync(
      `${base}.json`,
      `${JSON.stringify({ schema: 'airouter-fair-share/1', seconds: SECONDS, workers, stores: stores.description, outcomes }, null, 2)}\n`,
    );
    writeFileSync(`${base}.md`, `${lines.join('\n')}\n`);
    say(`report: ${path.relative(process.cwd(), base)}.{json,md}`);
    await gateway.stop();
  } finally {
    await stopAll();
    await stores.cleanup();
  }
}

if (process.argv[2] === '--attack') {
  process.stdout.write(
    JSON.stringify(await attack(process.argv[3] as Attack, JSON.parse(process.argv[4]!) as AttackTarget)),
  );
} else if (process.argv[2] === '--probe') {
  const [url, key, until] = process.argv.slice(3) as [string, string, string];
  const seen = await probe(url, key, Number(until));
  process.stdout.write(
    JSON.stringify({ healthz: seen.healthz.summary(), chat: seen.chat.summary(), errors: seen.errors }),
  );
} else {
  await main();
}
