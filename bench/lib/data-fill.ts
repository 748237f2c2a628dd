// The year of data behind bench/data.ts, written set-based (generate_series, INSERT … SELECT):
// one statement per table, or per million records, so that 20 million records take minutes.
//
// Every row is derived from its number: user n has the id …-8000-<n in hex>, key j of user n the
// id …-9000-<(n-1)·K+j in hex>, and a key's secret is `ar-` + the first 40 hex digits of
// SHA-256(seed + key id). The seed is the database's name, so a run that reuses a filled
// database (--reuse) can still present any key. A bench fixture only: these secrets are
// guessable by anyone who knows the scheme.

import { createHash } from 'node:crypto';
import { hashPassword } from '../../src/accounts/passwords.js';
import type { Sql } from '../../src/store/sql.js';

export interface FillOptions {
  users: number;
  keysPerUser: number;
  records: number;
  days: number;
  /** The database's name: the key secrets' seed. */
  seed: string;
}

/** What the timing half needs to know about a filled database; kept in its comment. */
export interface Fixture extends FillOptions {
  filledAt: string;
  heavyUserId: string;
  adminEmail: string;
  heavyEmail: string;
  password: string;
  fillMs: Record<string, number>;
}

export const PASSWORD = 'bench password 123';
export const HEAVY_EMAIL = 'heavy@example.test';
export const ADMIN_EMAIL = 'admin@example.test';
/**
 * The heaviest user's share of the records: 2.5 %, or with few users twice what the next
 * heaviest draws (the others' shares fall as r², so the first of them has about 1/√users).
 */
const heavyShare = (users: number) => Math.max(0.025, 2 / Math.sqrt(users - 1)).toFixed(4);

/** Prices in USD per million tokens (the catalogue's), and each model's share of the requests. */
export const MODELS = [
  { id: 'gpt-4o-mini', share: 0.4, input: 0.15, output: 0.6 },
  { id: 'claude-sonnet-4', share: 0.25, input: 3, output: 15 },
  { id: 'gpt-4o', share: 0.15, input: 2.5, output: 10 },
  { id: 'claude-haiku-3.5', share: 0.12, input: 0.8, output: 4 },
  { id: 'gemini-2.5-flash', share: 0.08, input: 0.3, output: 2.5 },
] as const;

const hex12 = (n: number) => n.toString(16).padStart(12, '0');
export const userIdOf = (n: number) => `00000000-0000-4000-8000-${hex12(n)}`;
export const keyIdOf = (n: number, j: number, keysPerUser: number) =>
  `00000000-0000-4000-9000-${hex12((n - 1) * keysPerUser + j)}`;
export const keySecretOf = (seed: string, keyId: string) =>
  `ar-${createHash('sha256')
    .update(seed + keyId)
    .digest('hex')
    .slice(0, 40)}`;

// The same three, in SQL, over expressions.
const userIdSql = (n: string) => `('00000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;
const keyIdSql = (n: string, j: string, k: number) =>
  `('00000000-0000-4000-9000-' || lpad(to_hex((${n} - 1) * ${k} + ${j}), 12, '0'))::uuid`;
const secretSql = (seed: string, keyId: string) =>
  `'ar-' || left(encode(sha256(convert_to('${seed}' || ${keyId}::text, 'UTF8')), 'hex'), 40)`;

/** Which key of user n carries a spend cap, and its period (the heaviest user's last key: total). */
export function capOf(n: number, j: number, keysPerUser: number): string | null {
  if (j !== keysPerUser - 1) return null;
  if (n === 1) return 'total';
  return n % 5 === 0 ? ['day', 'week', 'month', 'total'][(n / 5) % 4]! : null;
}
const capSql = (k: number) =>
  `CASE WHEN j <> ${k - 1} THEN NULL WHEN n = 1 THEN 'total' WHEN n % 5 = 0 THEN (ARRAY['day', 'week', 'month', 'total'])[1 + (n / 5) % 4] END`;

const sqlArray = (xs: readonly (string | number)[]) =>
  `ARRAY[${xs.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}]`;
/** USD per million tokens is nano-USD per token × 1,000. */
const nanoPerToken = (usdPerMillion: number) => Math.round(usdPerMillion * 1000);

type Step = (label: string, run: () => Promise<unknown>) => Promise<void>;

/**
 * Drops a table's secondary indexes and foreign keys for a bulk load; returns what puts them back
 * from their own definitions (one sort per index, one join per key), so the schema ends as the
 * migrations made it. The primary key stays: rows go in in its order.
 */
async function shed(sql: Sql, table: string): Promise<() => Promise<void>> {
  const indexes = await sql<{ name: string; def: string }[]>`
    SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
    WHERE i.indrelid = ${table}::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`;
  const fks = await sql<{ name: string; def: string }[]>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = ${table}::regclass AND contype = 'f'`;
  for (const i of indexes) await sql.unsafe(`DROP INDEX ${i.name}`);
  for (const f of fks) await sql.unsafe(`ALTER TABLE ${table} DROP CONSTRAINT ${f.name}`);
  return async () => {
    // A partitioned table's index is defined "ON ONLY" the parent (sql/041); built on the table,
    // it is built on every partition.
    for (const i of indexes) await sql.unsafe(i.def.replace(' ON ONLY ', ' ON '));
    for (const f of fks) await sql.unsafe(`ALTER TABLE ${table} ADD CONSTRAINT ${f.name} ${f.def}`);
  };
}

export async function fill(sql: Sql, o: FillOptions, progress: (line: string) => void): Promise<Fixture> {
  if (!/^[a-z0-9_]+$/.test(o.seed)) throw new Error(`seed ${o.seed} must be [a-z0-9_]`);
  if (o.users < 2 || o.keysPerUser < 1 || o.records < 1 || o.days < 1)
    throw new Error('--users ≥ 2, --keys-per-user, --records and --days ≥ 1');
  const { users: U, keysPerUser: K, records: N, days: D, seed } = o;
  const fillMs: Record<string, number> = {};
  const step: Step = async (label, run) => {
    const t0 = performance.now();
    await run();
    fillMs[label] = Math.round(performance.now() - t0);
    progress(`${label}: ${(fillMs[label] / 1000).toFixed(1)} s`);
  };
  // The records end where the fill starts: "now" for the gateway that reads them minutes later.
  const end = new Date();
  const start = new Date(end.getTime() - D * 86_400_000).toISOString();
  const admin = U + 1;

  // One connection (the caller's max: 1), so these hold for every statement below. The seed makes
  // random() repeat: the same flags give the same data.
  await sql.unsafe(
    `SET work_mem = '256MB'; SET maintenance_work_mem = '1GB'; SET synchronous_commit = off; SELECT setseed(0.51)`,
  );

  await step('users and keys', async () => {
    const names = sqlArray([
      'ana',
      'budi',
      'chen',
      'dewi',
      'eko',
      'fatima',
      'gita',
      'hiro',
      'ivan',
      'joko',
      'kim',
      'lena',
    ]);
    const domains = sqlArray([
      'example.test',
      'mail.test',
      'corp.test',
      'startup.test',
      'uni.test',
      'agency.test',
      'lab.test',
    ]);
    await sql.unsafe(`
      INSERT INTO users (id, email, email_verified_at, created_at, is_admin)
      SELECT ${userIdSql('n')},
             CASE n WHEN 1 THEN '${HEAVY_EMAIL}' WHEN ${admin} THEN '${ADMIN_EMAIL}'
                    ELSE format('%s.u%s@%s', (${names})[1 + n % 12], n, (${domains})[1 + n % 7]) END,
             t, t, n = ${admin}
      FROM generate_series(1, ${admin}) n, LATERAL (SELECT timestamptz '${start}' - interval '1 day' * (1 + n % 30) AS t) c`);
    // The two accounts that sign in get a real password hash, made as the gateway makes them.
    await sql`UPDATE users SET password_hash = ${await hashPassword(PASSWORD)} WHERE email IN (${HEAVY_EMAIL}, ${ADMIN_EMAIL})`;
    await sql.unsafe(`
      INSERT INTO api_keys (id, user_id, name, key_hash, prefix, created_at, rpm_limit, spend_limit_nano, spend_limit_period)
      SELECT id, ${userIdSql('n')}, CASE j WHEN 0 THEN 'default' ELSE 'key ' || (j + 1) END,
             encode(sha256(convert_to(secret, 'UTF8')), 'hex'), left(secret, 9),
             timestamptz '${start}' - interval '1 day' * (1 + n % 30) + interval '1 hour' * (1 + j),
             CASE WHEN j = 0 AND n % 7 = 0 THEN 600 END,
             -- Period caps generous enough for any day's history; a total cap is set from the
             -- key's spend once the records are in.
             CASE cap WHEN 'day' THEN 100e9 WHEN 'week' THEN 500e9 WHEN 'month' THEN 2000e9 WHEN 'total' THEN 0 END::bigint, cap
      FROM (SELECT n, j, ${capSql(K)} AS cap, ${keyIdSql('n', 'j', K)} AS id FROM generate_series(1, ${U}) n, generate_series(0, ${K - 1}) j) k,
           LATERAL (SELECT ${secretSql(seed, 'k.id')} AS secret) s`);
  });

  // Bulk-load usage_records as a restore would: without the totals trigger (its tables are
  // filled below by one GROUP BY each), its secondary indexes and its foreign key.
  // Each month's partitions first (sql/041, sql/043), as the writer makes the months it writes.
  await sql`SELECT usage_months_cover(${start}::timestamptz, ${end.toISOString()}::timestamptz + interval '31 days')`;
  await sql.unsafe(`ALTER TABLE usage_records DISABLE TRIGGER usage_totals_add`);
  const restoreRecords = await shed(sql, 'usage_records');

  const models = sqlArray(MODELS.map((m) => m.id));
  const inPrice = sqlArray(MODELS.map((m) => nanoPerToken(m.input)));
  const outPrice = sqlArray(MODELS.map((m) => nanoPerToken(m.output)));
  let acc = 0;
  const modelCase = `CASE ${MODELS.map((m, i) => `WHEN rm < ${(acc += m.share).toFixed(4)} THEN ${i + 1}`).join(' ')} ELSE ${MODELS.length} END`;
  // Traffic grows through the year (density ∝ time, so records land at √fraction of the span),
  // ids rise with time as they do in service. OFFSET 0 keeps each random() drawn once per row
  // (user and key must come from the same draw); the LATERALs only derive from the draws.
  const CHUNK = 1_000_000;
  await step('usage records', async () => {
    for (let lo = 1; lo <= N; lo += CHUNK) {
      const hi = Math.min(N, lo + CHUNK - 1);
      await sql.unsafe(`
        INSERT INTO usage_records (user_id, key_id, request_id, model, surface, stream, status, prompt_tokens, completion_tokens,
                                   cached_tokens, cost_nano, official_cost_nano, latency_ms, ttft_ms, created_at, route)
        SELECT ${userIdSql('n')}, ${keyIdSql('n', 'j', K)}, 'req_' || lpad(to_hex(i), 12, '0'), (${models})[m],
               CASE WHEN rs < 0.05 THEN 'responses' WHEN m IN (2, 4) AND rs < 0.75 THEN 'messages' ELSE 'chat' END,
               stream, status, pt, ct, cached, cost, cost * 5 / 4,
               CASE WHEN ok THEN 250 + ct * 12 + floor(rl * 800)::int ELSE 50 + floor(rl * 3000)::int END,
               CASE WHEN stream AND ok THEN 120 + floor(rl * 900)::int END,
               timestamptz '${start}' + interval '1 second' * (${D * 86400} * sqrt((i - rt) / ${N}::float8)),
               -- The bench catalogue's one route per model (bench/data.ts); sql/034.
               'fake-openai/upstream-' || (${models})[m]
        FROM (SELECT i, CASE WHEN random() < ${heavyShare(U)} THEN 1 ELSE 2 + floor(${U - 1} * random() ^ 2)::int END AS n,
                     floor(${K} * random() ^ 2)::int AS j, random() AS rm, random() AS rs, random() AS rp, random() AS rc,
                     random() AS rk, random() AS rl, random() AS rt, random() AS rx, random() < 0.6 AS stream
              FROM generate_series(${lo}, ${hi}) i OFFSET 0) g,
          -- About 2 % errors, charged nothing.
          LATERAL (SELECT rx < 0.98 AS ok, CASE WHEN rx < 0.98 THEN 200 WHEN rx < 0.99 THEN 429 WHEN rx < 0.995 THEN 500 ELSE 502 END AS status,
                          ${modelCase} AS m) a,
          LATERAL (SELECT CASE WHEN ok THEN least(150000, 40 + floor(-ln(1 - rp) * 3000)::int) ELSE 0 END AS pt,
                          CASE WHEN ok THEN least(16000, 5 + floor(-ln(1 - rc) * 450)::int) ELSE 0 END AS ct) b,
          LATERAL (SELECT CASE WHEN rk < 0.4 THEN floor(pt * 0.6)::int ELSE 0 END AS cached) c,
          LATERAL (SELECT (pt - cached)::bigint * (${inPrice})[m] + cached::bigint * (${inPrice})[m] / 10 + ct::bigint * (${outPrice})[m] AS cost) d`);
      progress(`  records ${hi.toLocaleString('en')} / ${N.toLocaleString('en')}`);
    }
    // Refusals at $0 (sql/026), one for every 200 records: the unfiltered and error logs read both tables.
    await sql.unsafe(`
      INSERT INTO refused_requests (user_id, key_id, request_id, model, surface, stream, status, error_code, latency_ms, created_at)
      SELECT ${userIdSql('n')}, ${keyIdSql('n', 'j', K)}, 'req_r' || lpad(to_hex(i), 11, '0'), CASE WHEN status = 402 THEN '' ELSE (${models})[1] END,
             'chat', false, status, CASE status WHEN 402 THEN 'insufficient_balance' ELSE 'rate_limit_exceeded' END, 2 + floor(rl * 20)::int,
             timestamptz '${start}' + interval '1 second' * (${D * 86400} * sqrt(rt))
      FROM (SELECT i, CASE WHEN random() < ${heavyShare(U)} THEN 1 ELSE 2 + floor(${U - 1} * random() ^ 2)::int END AS n,
                   floor(${K} * random() ^ 2)::int AS j, CASE WHEN random() < 0.5 THEN 402 ELSE 429 END AS status, random() AS rl, random() AS rt
            FROM generate_series(1, ${Math.ceil(N / 200)}) i OFFSET 0) g`);
  });

  await step('usage_records indexes and foreign key', restoreRecords);

  // The trigger's own expressions (sql/029), over every record at once; in key order, so that
  // millions of rows go into each primary key as appends rather than at random leaves.
  await step('running totals', async () => {
    // A foreign-key check per row was half the time of these inserts.
    const restore = [await shed(sql, 'usage_daily'), await shed(sql, 'usage_key_daily')];
    await sql.unsafe(`
      INSERT INTO usage_daily (user_id, day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
      SELECT user_id, (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
             sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
      FROM usage_records GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
    await sql.unsafe(`
      INSERT INTO usage_key_daily (key_id, day, user_id, cost_nano, last_at)
      SELECT key_id, (created_at AT TIME ZONE 'UTC')::date, user_id, sum(cost_nano), max(created_at)
      FROM usage_records WHERE key_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2`);
    await sql.unsafe(`
      INSERT INTO usage_model_daily (day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano)
      SELECT (created_at AT TIME ZONE 'UTC')::date, model, count(*), sum(prompt_tokens), sum(completion_tokens),
             sum(cached_tokens), sum(cost_nano), sum(official_cost_nano)
      FROM usage_records GROUP BY 1, 2`);
    await sql.unsafe(`
      INSERT INTO usage_hourly (hour, requests, tokens)
      SELECT date_bin('1 hour', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*), sum(prompt_tokens::bigint + completion_tokens)
      FROM usage_records GROUP BY 1`);
    for (const r of restore) await r();
    await sql.unsafe(`ALTER TABLE usage_records ENABLE TRIGGER usage_totals_add`);
  });

  await step('balances, deposits and caps', async () => {
    await sql.unsafe(`
      UPDATE users u SET charged_nano = c.total FROM (SELECT user_id, sum(cost_nano)::bigint AS total FROM usage_daily GROUP BY 1) c
      WHERE c.user_id = u.id`);
    // 1–3 paid deposits a user over the year, together the charges plus $5–54 left to spend.
    await sql.unsafe(`
      INSERT INTO deposits (user_id, method, provider, status, amount, currency, credit_nano, external_id, created_at, paid_at)
      SELECT u.id, method, method, 'paid', CASE method WHEN 'epusdt' THEN round(credit / 1e9, 2) ELSE round(credit * 16000 / 1e9) END,
             CASE method WHEN 'epusdt' THEN 'USDT' ELSE 'IDR' END, credit, format('bench-%s-%s', n, d), at - interval '3 minutes', at
      FROM generate_series(1, ${U}) n JOIN users u ON u.id = ${userIdSql('n')}, generate_series(1, 1 + n % 3) d,
           LATERAL (SELECT u.charged_nano + (5 + n % 50) * 1000000000::bigint AS total, 1 + n % 3 AS k) t,
           LATERAL (SELECT total / k + CASE WHEN d = k THEN total % k ELSE 0 END AS credit,
                           (ARRAY['qris', 'midtrans', 'epusdt'])[1 + (n + d) % 3] AS method,
                           timestamptz '${start}' + interval '1 day' * ${D} * (d - 1) / k + interval '1 minute' * (n % 1440) AS at) p`);
    // Invoices left to expire, which count for nothing.
    await sql.unsafe(`
      INSERT INTO deposits (user_id, method, provider, status, amount, currency, credit_nano, created_at, expires_at)
      SELECT ${userIdSql('n')}, 'qris', 'qris', 'expired', 160000, 'IDR', 10000000000, at, at + interval '15 minutes'
      FROM generate_series(10, ${U}, 10) n, LATERAL (SELECT timestamptz '${start}' + interval '1 hour' * (n % (${D} * 24)) AS at) t`);
    // An admin's goodwill credit to one user in a hundred, each with its audit entry.
    await sql.unsafe(`
      WITH credited AS (
        INSERT INTO balance_adjustments (user_id, amount_nano, reason, actor, created_at)
        SELECT ${userIdSql('n')}, 1000000000, 'goodwill credit', '${ADMIN_EMAIL}', timestamptz '${start}' + interval '1 hour' * (n % (${D} * 24))
        FROM generate_series(100, ${U}, 100) n RETURNING user_id, created_at)
      INSERT INTO admin_audit (actor_id, actor, action, target, reason, before, after, created_at)
      SELECT ${userIdSql(String(admin))}, '${ADMIN_EMAIL}', 'user.credit', u.email, 'goodwill credit', '{}', jsonb_build_object('amount_usd', '1.000000000'), c.created_at
      FROM credited c JOIN users u ON u.id = c.user_id ORDER BY c.created_at`);
    // balance = credits − charges, as reconcile checks it.
    await sql.unsafe(`
      UPDATE users u SET balance_nano = c.credits - u.charged_nano
      FROM (SELECT user_id, sum(x)::bigint AS credits FROM (
              SELECT user_id, credit_nano AS x FROM deposits WHERE status = 'paid'
              UNION ALL SELECT user_id, amount_nano FROM balance_adjustments) a GROUP BY 1) c
      WHERE c.user_id = u.id`);
    // A total cap leaves $100 over what the key has spent. (A key's last use is its records' own,
    // in usage_key_daily: sql/042.)
    await sql.unsafe(`
      UPDATE api_keys k SET spend_limit_nano = 100000000000 + coalesce((SELECT sum(cost_nano) FROM usage_key_daily d WHERE d.key_id = k.id), 0)
      WHERE spend_limit_period = 'total'`);
  });

  // A year-old table has long been vacuumed and analyzed (autovacuum may be off on a bench
  // server): without this the first timed reads would set hint bits and miss index-only scans.
  await step('vacuum analyze', () => sql.unsafe(`VACUUM (ANALYZE)`));

  return {
    ...o,
    filledAt: end.toISOString(),
    heavyUserId: userIdOf(1),
    heavyEmail: HEAVY_EMAIL,
    adminEmail: ADMIN_EMAIL,
    password: PASSWORD,
    fillMs,
  };
}
