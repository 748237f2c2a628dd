// The crash drills' rig: a gateway run as an operator runs it (`airouter serve`, several worker
// processes) on a Postgres database and a Redis server of its own, each reached through a TCP
// proxy the drill can cut, a fake upstream, a funded account, and a load of clients whose every
// answer is written down so that it can be matched with its usage record afterwards.
// Used by the tap tests in test/crash/ and by `npm run drill` (bench/drill.ts).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { usdToNano } from '../../src/billing/money.js';
import { reconcile, type ReconcileReport } from '../../src/billing/reconcile.js';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { migrate } from '../../src/store/migrate.js';
import type { Sql } from '../../src/store/sql.js';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.js';
import { childEnv, startServe, waitFor, type ServeChild, type Teardown } from '../helpers/child.js';
import { testCatalogue } from '../helpers/gateway.js';
import { METRICS_TOKEN } from '../helpers/http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { ADMIN_URL, uniqueName } from '../helpers/stores.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

export interface Outcome {
  id: string;
  kind: 'chat' | 'chat-stream' | 'messages-stream';
  startedAt: number;
  endedAt: number;
  /** HTTP status, 0 when the connection failed. */
  status: number;
  /** The whole answer arrived (for a stream: its final event). */
  complete: boolean;
  /** Body text of a failed answer, to check its envelope. */
  error?: string;
}

export interface DrillResult {
  drill: string;
  requests: number;
  /** Answered in full with status 200: each must have exactly one usage record. */
  answered: number;
  recorded: number;
  lost: number;
  duplicates: number;
  /** Streams that began (status 200) but did not complete, yet were billed. */
  partialBilled: number;
  /** Refused with 503 (a store down), in the surface's envelope. */
  unavailable: number;
  /** From the end of the fault to the first full answer of a request sent after it. */
  recoveryMs: number | null;
  /** From the end of the fault until every answered request had its record in Postgres. */
  recordedMs: number | null;
  reconcile: ReconcileReport;
}

const KINDS: Outcome['kind'][] = ['chat', 'chat-stream', 'messages-stream'];

export class Load {
  readonly outcomes: Outcome[] = [];
  private running = true;
  private loops: Promise<void>[] = [];
  private seq = 0;

  constructor(
    private readonly url: string,
    private readonly key: string,
    concurrency: number,
    private readonly tag: string,
  ) {
    for (let i = 0; i < concurrency; i++) this.loops.push(this.loop(i));
  }

  private async loop(worker: number): Promise<void> {
    while (this.running) {
      const kind = KINDS[(worker + this.seq) % KINDS.length];
      const id = `${this.tag}-${++this.seq}`;
      const o: Outcome = { id, kind, startedAt: Date.now(), endedAt: 0, status: 0, complete: false };
      this.outcomes.push(o);
      try {
        const messages = kind === 'messages-stream';
        const res = await fetch(`${this.url}${messages ? '/v1/messages' : '/v1/chat/completions'}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-request-id': id,
            ...(messages ? { 'x-api-key': this.key } : { authorization: `Bearer ${this.key}` }),
          },
          body: JSON.stringify({
            model: messages ? 'an-model' : 'oa-model',
            max_tokens: 200,
            stream: kind !== 'chat',
            messages: [{ role: 'user', content: `drill ${id} [[paced:12:5]]` }],
          }),
          signal: AbortSignal.timeout(20_000),
        });
        o.status = res.status;
        const text = await res.text();
        if (res.status === 200)
          o.complete =
            kind === 'chat'
              ? text.includes('"choices"')
              : kind === 'chat-stream'
                ? text.includes('data: [DONE]')
                : text.includes('event: message_stop');
        if (!o.complete) o.error = text.slice(-500);
      } catch (err) {
        o.error = (err as Error).message;
      }
      o.endedAt = Date.now();
      // A refused request is retried after a breath, as clients do.
      if (!o.complete) await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Time from `since` to the first full answer of a request sent at or after it. */
  recoveredAfter(since: number): number | null {
    const first = this.outcomes
      .filter((o) => o.complete && o.startedAt >= since)
      .sort((a, b) => a.endedAt - b.endedAt)[0];
    return first ? first.endedAt - since : null;
  }

  async stop(): Promise<Outcome[]> {
    this.running = false;
    await Promise.all(this.loops);
    return this.outcomes;
  }
}

export interface RigOptions {
  workers: number;
  /** Redis keeps an append-only file (fsync every second). */
  aof?: boolean;
  extraEnv?: Record<string, string>;
}

export class DrillRig {
  fake!: FakeUpstream;
  redis!: RedisServer;
  redisProxy!: TcpProxy;
  pgProxy!: TcpProxy;
  /** Direct connections for checks (not through the proxies). */
  sql!: Sql;
  hot!: RedisHotStore;
  gateway!: ServeChild;
  key!: string;
  userId!: string;
  private dbName = uniqueName('airouter_drill');
  private configPath!: string;
  private dbUrl!: string;

  private constructor(
    private readonly t: Teardown,
    private readonly opts: RigOptions,
  ) {}

  static async start(t: Teardown, opts: RigOptions): Promise<DrillRig> {
    const rig = new DrillRig(t, opts);
    await rig.setUp();
    return rig;
  }

  private async setUp(): Promise<void> {
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${this.dbName}`);
    this.t.teardown(async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${this.dbName} WITH (FORCE)`);
      await admin.end();
    });
    const direct = new URL(ADMIN_URL);
    direct.pathname = `/${this.dbName}`;
    this.dbUrl = direct.toString();
    this.sql = postgres(this.dbUrl, {
      max: 2,
      onnotice: () => {},
      types: { bigint: postgres.BigInt },
    }) as unknown as Sql;
    this.t.teardown(() => this.sql.end({ timeout: 1 }));
    await migrate(this.sql);

    this.fake = await startFakeUpstream({ record: false });
    this.t.teardown(() => this.fake.close());
    this.redis = await startRedisServer({ aof: this.opts.aof });
    this.t.teardown(() => this.redis.close());
    this.redisProxy = await startTcpProxy({ host: '127.0.0.1', port: this.redis.port });
    this.t.teardown(() => this.redisProxy.close());
    this.pgProxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    this.t.teardown(() => this.pgProxy.close());
    this.hot = new RedisHotStore(this.redis.url, 'ar:');
    this.t.teardown(() => this.hot.close());

    const dir = mkdtempSync(path.join(tmpdir(), 'airouter-drill-'));
    this.configPath = path.join(dir, 'gateway.config.json');
    writeFileSync(this.configPath, JSON.stringify(testCatalogue({ upstream: this.fake.url })));

    const user = await createVerifiedUser(this.sql, `${this.dbName}@example.test`);
    await creditUser(this.sql, this.hot, user.id, usdToNano('1000'), {
      method: 'operator',
      amount: '1000',
      currency: 'USD',
    });
    this.userId = user.id;
    this.key = (await createKey(this.sql, user.id, 'drill')).key;
    await this.startGateway();
  }

  /** A key of a new account with money, that no gateway process has met: its first request needs the hot store. */
  async spareKey(): Promise<string> {
    const user = await createVerifiedUser(this.sql, `spare-${Date.now()}-${this.dbName}@example.test`);
    await creditUser(this.sql, this.hot, user.id, usdToNano('10'), {
      method: 'operator',
      amount: '10',
      currency: 'USD',
    });
    return (await createKey(this.sql, user.id, 'spare')).key;
  }

  get env(): Record<string, string> {
    const viaProxy = new URL(this.dbUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(this.pgProxy.port);
    return childEnv({
      DATABASE_URL: viaProxy.toString(),
      REDIS_URL: `redis://127.0.0.1:${this.redisProxy.port}`,
      GATEWAY_CONFIG: this.configPath,
      WORKERS: String(this.opts.workers),
      FAKE_OPENAI_KEY: 'sk-fake',
      FAKE_ANTHROPIC_KEY: 'sk-ant-fake',
      USAGE_FLUSH_MS: '20',
      USAGE_FLUSH_MAX_MS: '20',
      REDIS_TIMEOUT_MS: '1000',
      SHUTDOWN_TIMEOUT_MS: '5000',
      METRICS_TOKEN,
      ...this.opts.extraEnv,
    });
  }

  /** Starts (or starts again, on the same port) `airouter serve`. */
  async startGateway(port?: number): Promise<void> {
    this.gateway = await startServe(this.t, port ? { ...this.env, PORT: String(port) } : this.env, 60_000);
  }

  /**
   * The gateway's live worker processes: children of the primary running `serve` (the primary
   * may also have tsx's esbuild service as a child; exited workers not yet reaped are left out).
   */
  workerPids(): number[] {
    try {
      return execFileSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(this.gateway.proc.pid)], {
        encoding: 'utf8',
      })
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter(([pid, stat, ...args]) => pid && stat && !stat.startsWith('Z') && args.at(-1) === 'serve')
        .map(([pid]) => Number(pid));
    } catch {
      return [];
    }
  }

  load(concurrency: number, tag: string): Load {
    return new Load(this.gateway.url, this.key, concurrency, tag);
  }

  /** Waits until every full answer has its record (or `timeoutMs`), then counts. */
  async verify(
    drill: string,
    outcomes: Outcome[],
    faultEnd: number,
    load: Load,
    opts: { partialBilled?: boolean; timeoutMs?: number } = {},
  ): Promise<DrillResult> {
    const answered = outcomes.filter((o) => o.status === 200 && o.complete);
    const begun = outcomes.filter((o) => o.status === 200 && !o.complete);
    const ids = [...answered, ...begun].map((o) => o.id);
    const count = async () => {
      const rows = await this.sql<{ request_id: string; n: number }[]>`
        SELECT request_id, count(*)::int AS n FROM usage_records WHERE request_id = ANY(${ids}) GROUP BY request_id`;
      return new Map(rows.map((r) => [r.request_id, r.n]));
    };
    let recorded = await count();
    // Streams cut short while the gateway lived are billed too, once their charge can land.
    const mustRecord = opts.partialBilled ? [...answered, ...begun] : answered;
    let recordedAt: number | null = null;
    await waitFor(
      async () => {
        recorded = await count();
        if (recordedAt === null && answered.every((o) => recorded.has(o.id))) recordedAt = Date.now();
        return mustRecord.every((o) => recorded.has(o.id)) && (await this.hot.outboxLength()) === 0;
      },
      opts.timeoutMs ?? 30_000,
      100,
    ).catch(() => {});
    // The gateway's own retries and audits have had their chance: now the books must balance.
    const report = await reconcile(this.sql, this.hot);
    return {
      drill,
      requests: outcomes.length,
      answered: answered.length,
      recorded: answered.filter((o) => recorded.has(o.id)).length,
      lost: answered.filter((o) => !recorded.has(o.id)).length,
      duplicates: [...recorded.values()].filter((n) => n > 1).length,
      partialBilled: begun.filter((o) => recorded.has(o.id)).length,
      unavailable: outcomes.filter((o) => o.status === 503).length,
      recoveryMs: load.recoveredAfter(faultEnd),
      recordedMs: recordedAt === null ? null : Math.max(0, recordedAt - faultEnd),
      reconcile: report,
    };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One line of the drill table. */
export function formatResult(r: DrillResult): string {
  const s = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(2)} s`);
  return `| ${r.drill} | ${r.requests} | ${r.answered} | ${r.recorded} | ${r.lost} | ${r.duplicates} | ${r.unavailable} | ${s(r.recoveryMs)} | ${s(r.recordedMs)} | ${r.reconcile.ok ? 'exact' : 'MISMATCH'} |`;
}

export const TABLE_HEAD =
  '| drill | requests | answered in full | with their record | lost | recorded twice | 503s | serving again after | all recorded after | reconcile |\n|---|---|---|---|---|---|---|---|---|---|';
