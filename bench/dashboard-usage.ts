// Dashboard usage queries at 100,000 records for one user: GET /usage and /usage-stats over
// HTTP against a real gateway on a throwaway Postgres database.
//
//   node --import tsx bench/dashboard-usage.ts [--rows N] [--runs N] [--explain]
//
// Env: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), a role
// that may create databases; REDIS_URL to use Redis for the hot store (default: in-process).

import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createKey } from '../src/accounts/keys.js';
import { createVerifiedUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/gateway.js';
import { createLogger } from '../src/log.js';
import { openStores } from '../src/store/index.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const ROWS = opt('rows', 100_000);
const RUNS = opt('runs', 20);
const EXPLAIN = args.includes('--explain');
const ADMIN_URL =
  process.env.BENCH_DATABASE_ADMIN_URL ??
  process.env.TEST_DATABASE_ADMIN_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

const MODELS = ['gpt-4o-mini', 'claude-sonnet-4', 'gpt-4o', 'claude-haiku-3.5'];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const dbName = `airouter_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-bench-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_PREFIX: `bench_${randomBytes(3).toString('hex')}:`,
    DATA_DIR: path.join(dir, 'data'),
  });
  const log = createLogger(config.LOG_LEVEL);
  const stores = await openStores(config);
  let stop: (() => Promise<void>) | undefined;
  try {
    const password = 'bench password 123';
    const user = await createVerifiedUser(stores.sql, `bench-${randomBytes(3).toString('hex')}@example.test`, password);
    const keys = await Promise.all([0, 1, 2].map((i) => createKey(stores.sql, user.id, `k${i}`)));
    // Someone else's usage in the same table, so the per-user index has something to skip.
    const other = await createVerifiedUser(stores.sql, `other-${randomBytes(3).toString('hex')}@example.test`);

    const t0 = performance.now();
    const insert = (userId: string, n: number, keyIds: (string | null)[]) => stores.sql`
      INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status,
        prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano, latency_ms, ttft_ms, created_at)
      SELECT ${userId}, (${keyIds}::uuid[])[1 + i % ${keyIds.length}], 'req_' || i, (${MODELS}::text[])[1 + i % ${MODELS.length}],
             CASE WHEN i % 3 = 0 THEN 'messages' ELSE 'chat' END, i % 2 = 0, CASE WHEN i % 50 = 0 THEN 502 ELSE 200 END,
             100 + i % 900, 20 + i % 300, (i % 5) * 10, 1000 + (i % 7919) * 13, 1300 + (i % 7919) * 17, 200 + i % 3000, 50 + i % 400,
             now() - (i * interval '89 days' / ${n})
      FROM generate_series(1, ${n}) AS i`;
    await insert(
      user.id,
      ROWS,
      keys.map((k) => k.id),
    );
    await insert(other.id, Math.floor(ROWS / 4), [null]);
    await stores.sql`ANALYZE`;
    const insertMs = performance.now() - t0;

    const running = await startGateway(config, log, stores);
    stop = () => running.stop();
    const base = `http://127.0.0.1:${running.port}/api/dashboard`;
    const login = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password }),
    });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
    const { token } = (await login.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}` };

    // A cursor deep into the log, to show that page N costs what page 1 does.
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const page = (await (
        await fetch(`${base}/usage?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth })
      ).json()) as { next_cursor: string | null };
      cursor = page.next_cursor;
    }

    const cases: [string, string][] = [
      ['GET /usage (limit 50)', '/usage'],
      ['GET /usage?limit=500', '/usage?limit=500'],
      ['GET /usage (page 101, by cursor)', `/usage?limit=500&cursor=${cursor}`],
      ['GET /usage?range=90d&model=…', `/usage?range=90d&model=${MODELS[1]}`],
      ['GET /usage?key_id=…', `/usage?key_id=${keys[2].id}`],
      ['GET /usage-stats?range=90d', '/usage-stats?range=90d'],
      ['GET /usage-stats?range=7d', '/usage-stats?range=7d'],
      ['GET /usage-stats?range=24h', '/usage-stats?range=24h'],
    ];
    console.log(
      `\n${ROWS.toLocaleString('en')} usage records for one user (+${Math.floor(ROWS / 4).toLocaleString('en')} for another), spread over 89 days; inserted in ${insertMs.toFixed(0)} ms`,
    );
    console.log(
      `Postgres: ${(await stores.sql<{ v: string }[]>`SELECT version() AS v`)[0].v.split(' on ')[0]}; hot store: ${stores.hot.kind}; ${RUNS} timed runs after 3 warm-ups\n`,
    );
    console.log(
      'endpoint'.padEnd(36),
      'median ms'.padStart(10),
      'min ms'.padStart(8),
      'max ms'.padStart(8),
      '  rows / requests',
    );
    for (const [label, p] of cases) {
      const times: number[] = [];
      let summary = '';
      for (let i = 0; i < RUNS + 3; i++) {
        const start = performance.now();
        const res = await fetch(base + p, { headers: auth });
        const body = (await res.json()) as { data?: unknown[]; requests?: number; error?: unknown };
        const ms = performance.now() - start;
        if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
        if (i >= 3) times.push(ms);
        summary = body.data ? `${body.data.length} rows` : `${body.requests} requests`;
      }
      console.log(
        label.padEnd(36),
        median(times).toFixed(1).padStart(10),
        Math.min(...times)
          .toFixed(1)
          .padStart(8),
        Math.max(...times)
          .toFixed(1)
          .padStart(8),
        ' ',
        summary,
      );
    }

    // For comparison: the same 90-day totals as one grouped scan of the raw log, which is what
    // usage_daily (sql/002) saves. Timed in SQL, without HTTP.
    const rawTimes: number[] = [];
    for (let i = 0; i < RUNS + 3; i++) {
      const start = performance.now();
      await stores.sql`
        SELECT model, (created_at AT TIME ZONE 'UTC')::date AS day, count(*), sum(prompt_tokens), sum(completion_tokens),
               sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
        FROM usage_records WHERE user_id = ${user.id} AND created_at >= ${new Date(Date.now() - 90 * 86_400_000)} GROUP BY 1, 2`;
      if (i >= 3) rawTimes.push(performance.now() - start);
    }
    console.log(
      `\n(for comparison) 90-day totals as one grouped scan of usage_records, SQL only: median ${median(rawTimes).toFixed(1)} ms`,
    );

    if (EXPLAIN) {
      const from = new Date(Date.now() - 90 * 86_400_000);
      const plan = await stores.sql.unsafe(
        `EXPLAIN (ANALYZE, BUFFERS) SELECT model, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*), sum(prompt_tokens), sum(completion_tokens), sum(cached_tokens), sum(cost_nano), sum(official_cost_nano) FROM usage_records WHERE user_id = $1 AND created_at >= $2 GROUP BY 1, 2`,
        [user.id, from],
      );
      console.log('\nusage-stats plan:\n' + plan.map((r) => r['QUERY PLAN']).join('\n'));
      const plan2 = await stores.sql.unsafe(
        `EXPLAIN (ANALYZE, BUFFERS) SELECT id FROM usage_records WHERE user_id = $1 AND (created_at, id) < (now() - interval '30 days', 9223372036854775807) ORDER BY created_at DESC, id DESC LIMIT 51`,
        [user.id],
      );
      console.log('\nusage page plan:\n' + plan2.map((r) => r['QUERY PLAN']).join('\n'));
    }
  } finally {
    if (stop) await stop();
    else await stores.close();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
