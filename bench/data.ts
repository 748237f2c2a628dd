// A year of data (issue 51): a gateway's database as it looks after a year of service — by
// default 100,000 users, 300,000 keys and 20 million usage records over 365 days, one user with
// 2.5 % of them — filled set-based in a throwaway database, then every dashboard and admin call
// of that heaviest user (and admin), reconcile, and the first request of keys never seen by the
// process, timed against a real gateway started in-process.
//
//   npm run bench:data -- [--users N] [--keys-per-user N] [--records N] [--days N] [--runs N] [--key-seconds N] [--profile DIR] [--keep] [--reuse DB]
//
// Env: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), a role
// that may create databases; REDIS_URL to run the hot store on Redis (default: in-process).
// Writes bench/reports/data-<time>.{md,json}.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { reconcile } from '../src/billing/reconcile.js';
import { creditUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/config.js';
import { startGateway, type RunningGateway } from '../src/gateway.js';
import { createLogger } from '../src/log.js';
import { openStores } from '../src/store/index.js';
import { migrate } from '../src/store/migrate.js';
import { openSql } from '../src/store/sql.js';
import { startFakeUpstream, type FakeUpstream } from '../test/fake-upstream/server.js';
import { capOf, fill, keyIdOf, keySecretOf, MODELS, userIdOf, type Fixture } from './lib/data-fill.js';
import { redisClock, timeKeys, unusedKeys, walClock, withGatewayProcess, writePathSettings } from './lib/data-keys.js';
import { timePages } from './lib/data-pages.js';
import { fixtureSizes, row, writeReport, type Row } from './lib/data-report.js';
import { runtime, runtimeText } from './lib/runtime.js';

const HELP = `npm run bench:data -- [flags]
  --users N           accounts (default 100000)
  --keys-per-user N   keys per account (default 3)
  --records N         usage records (default 20000000)
  --days N            span of the records, ending now (default 365)
  --runs N            timed calls per endpoint (default 20)
  --key-seconds N     each key throughput loop (default 20)
  --profile DIR       V8 CPU profile of the keys' gateway process into DIR (bench/profile-summary.ts reads it)
  --keep              keep the database and print its URL
  --reuse DB          time an existing database filled by this script (never dropped)`;

const args = process.argv.slice(2);
const FLAGS = ['--users', '--keys-per-user', '--records', '--days', '--runs', '--key-seconds', '--profile', '--reuse'];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--help') {
    console.log(HELP);
    process.exit(0);
  }
  if (FLAGS.includes(args[i]!)) i++;
  else if (args[i] !== '--keep') throw new Error(`unknown flag ${args[i]}\n${HELP}`);
}
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const count = (name: string, def: number) => {
  const v = flag(name) === undefined ? def : Number(flag(name));
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} takes a whole number ≥ 1`);
  return v;
};
const opts = {
  users: count('users', 100_000),
  keysPerUser: count('keys-per-user', 3),
  records: count('records', 20_000_000),
  days: count('days', 365),
  runs: count('runs', 20),
  keySeconds: count('key-seconds', 20),
  keep: args.includes('--keep'),
  reuse: flag('reuse'),
  profile: flag('profile'),
};
const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** First requests of keys nobody used in this process, and of keys with a total cap. */
const COLD_KEYS = 200;
const CAPPED_KEYS = 20;
const WARMUP_KEYS = 20;

const t0 = performance.now();
const progress = (line: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${line}\n`);
const ms = (since: number) => Math.round((performance.now() - since) * 1000) / 1000;

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

function catalogue(upstream: string) {
  const price = (m: (typeof MODELS)[number], f: number) => ({
    input: m.input * f,
    output: m.output * f,
    cache_read: (m.input * f) / 10,
  });
  return {
    providers: [{ id: 'fake-openai', dialect: 'openai', base_url: `${upstream}/v1` }],
    models: MODELS.map((m) => ({
      id: m.id,
      owned_by: 'bench',
      context_window: 200_000,
      max_output_tokens: 8192,
      pricing: price(m, 1),
      official_pricing: price(m, 1.25),
      // The revenue report prices margins from the first route's upstream_pricing.
      routes: [{ provider: 'fake-openai', model: `upstream-${m.id}`, upstream_pricing: price(m, 0.7) }],
    })),
  };
}

async function readFixture(dbName: string, admin: postgres.Sql): Promise<Fixture> {
  const [r] = await admin<
    { c: string | null }[]
  >`SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = ${dbName}`;
  if (!r) throw new Error(`no database ${dbName}`);
  try {
    return JSON.parse(r.c ?? '') as Fixture;
  } catch {
    throw new Error(`${dbName} was not filled by bench/data.ts (its comment holds no fixture)`);
  }
}

/** The users whose keys are timed: spread over the whole range, so heavy and light accounts mix. */
function pickUsers(f: Fixture): { warm: number[]; cold: number[]; capped: number[] } {
  const plain: number[] = [];
  for (let n = 2; n <= f.users; n++) if (capOf(n, f.keysPerUser - 1, f.keysPerUser) === null) plain.push(n);
  const want = Math.min(plain.length, COLD_KEYS + WARMUP_KEYS);
  const picks = [...new Set(Array.from({ length: want }, (_, i) => plain[Math.floor((i * plain.length) / want)]!))];
  const warm = picks.filter((_, i) => i % 11 === 0);
  const cold = picks.filter((_, i) => i % 11 !== 0);
  // The heaviest user first; then the heaviest others whose last key has a total cap.
  const capped = [1];
  for (let n = 2; n <= f.users && capped.length < CAPPED_KEYS; n++)
    if (capOf(n, f.keysPerUser - 1, f.keysPerUser) === 'total') capped.push(n);
  return { warm, cold, capped };
}

async function main() {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbName = opts.reuse ?? `airouter_data_${randomBytes(4).toString('hex')}`;
  const dbUrl = withDatabase(ADMIN_URL, dbName);
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-data-'));
  const redisPrefix = `bench_data_${randomBytes(3).toString('hex')}:`;
  let upstream: FakeUpstream | undefined;
  let running: RunningGateway | undefined;
  /** Whether there is a filled database to keep or drop at the end. */
  let created = false;
  let reused = false;
  const load = { before: loadavg()[0]!, after: 0 };
  try {
    let fixture: Fixture;
    if (opts.reuse) {
      fixture = await readFixture(dbName, admin);
      reused = true;
      progress(
        `reusing ${dbName}: ${fixture.users.toLocaleString('en')} users, ${fixture.records.toLocaleString('en')} records, filled ${fixture.filledAt}`,
      );
      // What the last runs wrote (their key loops: a million records or more, all of one month),
      // vacuumed and analyzed as autovacuum would have done on a served database meanwhile. Without
      // it a bench server with autovacuum off plans the current month by the fill's statistics: a
      // month of a fifth its size, and a model filter read through the time index past every row
      // the loops added (229-286 ms where the fill's own run took 3-6).
      const own = await openSql({ databaseUrl: dbUrl, dataDir: dir, max: 1 });
      try {
        const t = performance.now();
        await own.sql.unsafe('VACUUM (ANALYZE)');
        progress(`vacuum analyze (what the last runs wrote): ${(ms(t) / 1000).toFixed(1)} s`);
      } finally {
        await own.close();
      }
    } else {
      await admin.unsafe(`CREATE DATABASE ${dbName}`);
      created = true;
      progress(`created ${dbName} (if this run dies: DROP DATABASE ${dbName})`);
      const own = await openSql({ databaseUrl: dbUrl, dataDir: dir, max: 1 });
      try {
        const t = performance.now();
        await migrate(own.sql);
        progress(`migrations: ${ms(t).toFixed(0)} ms`);
        fixture = await fill(
          own.sql,
          { users: opts.users, keysPerUser: opts.keysPerUser, records: opts.records, days: opts.days, seed: dbName },
          progress,
        );
      } finally {
        await own.close();
      }
      // The database says what is in it, for --reuse.
      await admin.unsafe(`COMMENT ON DATABASE ${dbName} IS '${JSON.stringify(fixture).replace(/'/g, "''")}'`);
    }
    const sizes = await fixtureSizes(dbUrl, fixture);
    progress(
      `heaviest user: ${sizes.heavy_records.toLocaleString('en')} records (${(sizes.heavy_share * 100).toFixed(2)} %); next: ${sizes.next_heaviest_records.toLocaleString('en')}`,
    );

    upstream = await startFakeUpstream({ record: false });
    const configPath = path.join(dir, 'gateway.config.json');
    writeFileSync(configPath, JSON.stringify(catalogue(upstream.url)));
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DATABASE_URL: dbUrl,
      REDIS_URL: process.env.REDIS_URL ?? '',
      REDIS_PREFIX: redisPrefix,
      DATA_DIR: path.join(dir, 'data'),
      GATEWAY_CONFIG: configPath,
    });
    const stores = await openStores(config);
    // The heaviest account (its capped key, and the keys phase's one key) is topped up by a paid
    // deposit, so reconcile stays exact: runs over a kept database spend it, and a 402 is not
    // what is timed.
    await creditUser(stores.sql, stores.hot, userIdOf(1), 1_000n * 1_000_000_000n, {
      method: 'operator',
      amount: '1000',
      currency: 'USD',
    });
    running = await startGateway(config, createLogger(config.LOG_LEVEL), stores).catch(async (err: unknown) => {
      await stores.close();
      throw err;
    });
    const url = `http://127.0.0.1:${running.port}`;
    const rows: Row[] = [];

    // ---- the inference path: first requests of keys this process has never resolved
    const K = fixture.keysPerUser;
    const chat = async (n: number, j: number): Promise<number> => {
      const secret = keySecretOf(fixture.seed, keyIdOf(n, j, K));
      const start = performance.now();
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODELS[0].id,
          messages: [{ role: 'user', content: 'Say hello.' }],
          max_tokens: 16,
        }),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`chat as user ${n} key ${j}: ${res.status} ${text.slice(0, 300)}`);
      return ms(start);
    };
    const users = pickUsers(fixture);
    // Compiles the request path first, with keys of their own, so that "cold" means the key's.
    for (const n of users.warm) for (let i = 0; i < 3; i++) await chat(n, 0);
    const first: number[] = [];
    for (const n of users.cold) first.push(await chat(n, 0));
    rows.push(row(`POST /v1/chat/completions, cold key (${users.cold.length} keys, first request each)`, first));
    const again: number[] = [];
    for (const n of users.cold) again.push(await chat(n, 0));
    rows.push(row('POST /v1/chat/completions, the same keys again', again));
    const capped: number[] = [];
    for (const n of users.capped) capped.push(await chat(n, K - 1));
    rows.push(row('POST /v1/chat/completions, cold key with a total cap, heaviest user', capped.slice(0, 1)));
    if (capped.length > 1)
      rows.push(row(`POST /v1/chat/completions, cold key with a total cap (${capped.length} users)`, capped));
    progress('inference timed');

    // ---- the dashboard and admin calls, each timed over --runs after two warm-ups
    rows.push(...(await timePages({ url, fixture, runs: opts.runs, progress })));

    // Stopping flushes the usage writer, so reconcile sees every charge the timed requests made.
    await running.stop();
    running = undefined;

    // ---- keys: a process that has never seen them, on a hot-store prefix nothing has filled
    const used = new Set([1, ...users.warm, ...users.cold, ...users.capped]);
    const fresh = unusedKeys(fixture.users, K, used, (n, j) => capOf(n, j, K)).map(([n, j]) =>
      keySecretOf(fixture.seed, keyIdOf(n, j, K)),
    );
    const keyEnv = {
      DATABASE_URL: dbUrl,
      REDIS_URL: process.env.REDIS_URL ?? '',
      REDIS_PREFIX: `${redisPrefix}keys:`,
      DATA_DIR: path.join(dir, 'keys-data'),
    };
    progress(`keys: ${fresh.length.toLocaleString('en')} unused keys on hand; a gateway process of its own`);
    const wal = await walClock(admin);
    const stats = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined;
    const redis = stats && redisClock(() => stats.info('commandstats'));
    const keys = await withGatewayProcess(
      { dir, env: keyEnv, catalogue, profileDir: opts.profile && path.resolve(opts.profile), progress },
      (gatewayUrl, cpu) =>
        timeKeys({
          cpu,
          wal,
          redis,
          url: gatewayUrl,
          model: MODELS[0].id,
          fresh,
          oneKey: keySecretOf(fixture.seed, keyIdOf(1, 0, K)),
          seconds: opts.keySeconds,
          progress,
        }),
    ).finally(() => stats?.disconnect());
    keys.postgres = await writePathSettings(admin);
    const own = await openSql({ databaseUrl: dbUrl, dataDir: dir, max: 1 });
    let rec;
    try {
      const start = performance.now();
      rec = await reconcile(own.sql);
      rows.push(
        row(
          'reconcile --full (src/billing/reconcile.ts: every record summed again)',
          [ms(start)],
          `${rec.users.toLocaleString('en')} users, ${rec.mismatches.length} mismatches`,
        ),
      );
      // An operator's routine run: the records since the checkpoint (none here, so this is its
      // floor: every user's balance checked against the kept sums and the deposits).
      const incremental: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        const r = await reconcile(own.sql);
        incremental.push(ms(t));
        if (!r.ok) rec = r;
      }
      rows.push(
        row(
          'reconcile (incremental: since its checkpoint)',
          incremental,
          `${rec.users.toLocaleString('en')} users, ${rec.mismatches.length} mismatches`,
        ),
      );
    } finally {
      await own.close();
    }
    load.after = loadavg()[0]!;

    const [pg] = await admin<
      { v: string; autovacuum: string }[]
    >`SELECT split_part(version(), ' on ', 1) AS v, current_setting('autovacuum') AS autovacuum`;
    const files = writeReport({
      command: `npm run bench:data -- ${args.join(' ')}`.trim(),
      date: new Date().toISOString(),
      machine: { cores: cpus().length, load_before: load.before, load_after: load.after },
      runtime: runtimeText(runtime()),
      postgres: `${pg!.v} (autovacuum ${pg!.autovacuum})`,
      hot_store: stores.hot.kind,
      database: dbName,
      fixture,
      sizes,
      reconcile_ok: rec.ok,
      rows,
      keys,
    });
    progress(`report: ${files.join(', ')}`);
    if (!rec.ok)
      throw new Error(
        `reconcile found ${rec.mismatches.length} mismatches, e.g. ${JSON.stringify(rec.mismatches[0], (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
      );
  } finally {
    if (running) await running.stop().catch(() => {});
    if (upstream) await upstream.close();
    if (process.env.REDIS_URL) await dropPrefix(process.env.REDIS_URL, redisPrefix);
    if (created && !opts.keep) {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } else if (created || reused) {
      console.log(
        `\ndatabase kept: ${dbUrl}\n  time it again: npm run bench:data -- --reuse ${dbName} --runs ${opts.runs}\n  drop it: psql ${ADMIN_URL} -c 'DROP DATABASE ${dbName}'`,
      );
    }
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The hot store's keys of this run only. */
async function dropPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
