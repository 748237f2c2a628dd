// bench/data.ts's figures: what the filled database holds, and the report (stdout, and
// bench/reports/data-<time>.{md,json}).

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSql } from '../../src/store/sql.js';
import type { Fixture } from './data-fill.js';
import type { KeyRuns } from './data-keys.js';
import { renderMarkdown, renderText, type Table } from './report.js';

export interface Row {
  call: string;
  runs: number;
  p50: number;
  p95: number;
  max: number;
  /** What the last call answered (rows, days, requests), to show the call did its work. */
  answer: string;
}

/** Nearest-rank percentile, as bench/lib/stats.ts takes them. */
function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
export function row(call: string, samples: number[], answer = 'all 200'): Row {
  const s = [...samples].sort((a, b) => a - b);
  return { call, runs: s.length, p50: pct(s, 0.5), p95: pct(s, 0.95), max: s.at(-1)!, answer };
}

export interface Sizes {
  tables: Record<string, { rows: number; mb: number }>;
  database_mb: number;
  heavy_records: number;
  heavy_share: number;
  next_heaviest_records: number;
}

const TABLES = [
  'users',
  'api_keys',
  'deposits',
  'balance_adjustments',
  'admin_audit',
  'usage_records',
  'refused_requests',
  'usage_daily',
  'usage_key_daily',
  'usage_model_daily',
  'usage_hourly',
];

export async function fixtureSizes(dbUrl: string, f: Fixture): Promise<Sizes> {
  const { sql, close } = await openSql({ databaseUrl: dbUrl, dataDir: '', max: 1 });
  try {
    const tables: Sizes['tables'] = {};
    for (const t of TABLES) {
      const [r] = await sql.unsafe<{ rows: bigint; bytes: bigint }[]>(
        // A partitioned table (sql/041, sql/043) holds no pages itself: its partitions do.
        `SELECT count(*) AS rows, coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('${t}'))::bigint,
          pg_total_relation_size('${t}')) AS bytes FROM ${t}`,
      );
      tables[t] = { rows: Number(r!.rows), mb: Math.round(Number(r!.bytes) / 1e5) / 10 };
    }
    const [db] = await sql<{ bytes: bigint }[]>`SELECT pg_database_size(current_database()) AS bytes`;
    // From the daily totals: a tenth of the records' rows, and answered requests only.
    const top = await sql<{ user_id: string; n: bigint }[]>`
      SELECT user_id, sum(requests)::bigint AS n FROM usage_daily GROUP BY 1 ORDER BY 2 DESC LIMIT 2`;
    const heavy = Number(top.find((t) => t.user_id === f.heavyUserId)?.n ?? 0n);
    const next = Number(top.find((t) => t.user_id !== f.heavyUserId)?.n ?? 0n);
    return {
      tables,
      database_mb: Math.round(Number(db!.bytes) / 1e6),
      heavy_records: heavy,
      heavy_share: heavy / Math.max(1, tables.usage_records!.rows),
      next_heaviest_records: next,
    };
  } finally {
    await close();
  }
}

export interface DataReport {
  command: string;
  date: string;
  machine: { cores: number; load_before: number; load_after: number };
  runtime: string;
  postgres: string;
  hot_store: string;
  database: string;
  fixture: Fixture;
  sizes: Sizes;
  reconcile_ok: boolean;
  rows: Row[];
  keys: KeyRuns;
}

/** Prints the tables and writes both files; returns their paths. */
export function writeReport(r: DataReport): string[] {
  const f = r.fixture;
  const { password: _password, ...fixture } = f;
  const timings: Table = {
    title: `Latency, ms (${r.hot_store} hot store)`,
    head: ['call', 'p50 ms', 'p95 ms', 'max ms', 'runs', 'answer'],
    rows: r.rows.map((x) => [x.call, x.p50, x.p95, x.max, x.runs, x.answer]),
    notes: [
      `${r.command}; ${r.date.slice(0, 10)}; ${r.machine.cores} cores, load ${r.machine.load_before.toFixed(2)} before, ${r.machine.load_after.toFixed(2)} after`,
      `${r.postgres}; ${r.runtime}`,
      `reconcile: ${r.reconcile_ok ? 'exact' : 'MISMATCHES'}`,
    ],
  };
  const sizes: Table = {
    title: `What the database holds (${f.days} days, ${r.sizes.database_mb.toLocaleString('en')} MB)`,
    head: ['table', 'rows', 'MB'],
    rows: Object.entries(r.sizes.tables).map(([t, s]) => [t, s.rows, s.mb]),
    notes: [
      `heaviest user: ${r.sizes.heavy_records.toLocaleString('en')} answered requests (${(r.sizes.heavy_share * 100).toFixed(2)} % of the records); the next heaviest: ${r.sizes.next_heaviest_records.toLocaleString('en')}`,
    ],
  };
  const fill: Table = {
    title: `Fill, filled ${f.filledAt}`,
    head: ['step', 's'],
    rows: [
      ...Object.entries(f.fillMs).map(([k, v]) => [k, v / 1000]),
      ['total', Object.values(f.fillMs).reduce((a, b) => a + b, 0) / 1000],
    ],
  };
  const k = r.keys;
  const keys: Table = {
    title: 'Keys never seen by the gateway process (its own process, one worker, static upstream)',
    head: ['run', 'requests', 'keys', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'not 200'],
    rows: [k.burst, k.one, k.distinct].map((x) => [
      x.what,
      x.requests,
      x.keys,
      x.rps,
      x.latency.p50 ?? '–',
      x.latency.p99 ?? '–',
      x.latency.max ?? '–',
      Object.entries(x.failures)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ') || 'none',
    ]),
    notes: [
      `distinct keys ÷ one key: ${k.ratio} of its req/s (target ≥ 0.5); the burst's p99 target is under 1,000 ms`,
      ...(k.burst.waves
        ? [
            `the burst's first wave (the first request of each of its ${k.burst.connections} connections, on a process that had served nothing): p50 ${k.burst.waves.first.p50} ms, max ${k.burst.waves.first.max} ms; every request after it: p50 ${k.burst.waves.later.p50} ms, p99 ${k.burst.waves.later.p99} ms`,
          ]
        : []),
      ...(k.turnRatios
        ? [
            `the two loops took turns: ${k.turnRatios.join(', ')} in each (one key ${k.one.sliceRps?.join(', ')} req/s; distinct keys ${k.distinct.sliceRps?.join(', ')})`,
          ]
        : []),
      ...[k.one, k.distinct].flatMap((x) => [
        ...(x.cpuUsPerRequest
          ? [
              `CPU µs a request, ${x.what}: ${Object.entries(x.cpuUsPerRequest)
                .map(([p, us]) => `${p} ${us}`)
                .join(', ')}`,
            ]
          : []),
        ...(x.redis
          ? [
              `Redis a request, ${x.what}: ${x.redis.commandsPerRequest} commands, ${x.redis.scriptCallsPerRequest} script calls`,
            ]
          : []),
        ...(x.wal
          ? [
              `Postgres WAL a request, ${x.what}: ${x.wal.bytesPerRequest.toLocaleString('en')} bytes, ${x.wal.fullPagesPerRequest} whole pages; ${x.wal.checkpoints} checkpoints during it`,
            ]
          : []),
      ]),
      ...(k.postgres
        ? [
            `Postgres: ${Object.entries(k.postgres)
              .map(([n, v]) => `${n} ${v}`)
              .join(', ')} (docs/api.md, "Postgres for a busy year")`,
          ]
        : []),
    ],
  };
  console.log(`\n${renderText(sizes)}\n\n${renderText(fill)}\n\n${renderText(timings)}\n\n${renderText(keys)}\n`);

  const dir = path.join(import.meta.dirname, '..', 'reports');
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `data-${r.date.replace(/[:.]/g, '-')}`);
  writeFileSync(`${base}.json`, JSON.stringify({ schema: 'airouter-bench-data/1', ...r, fixture }, null, 2) + '\n');
  writeFileSync(`${base}.md`, `# A year of data\n\n${[timings, keys, sizes, fill].map(renderMarkdown).join('\n\n')}\n`);
  return [`${base}.md`, `${base}.json`];
}
