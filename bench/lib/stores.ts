// Where the gateway under test keeps its state. With DATABASE_URL the bench creates its own
// database next to the given one (and drops it afterwards), so a run never touches user data;
// with REDIS_URL it uses its own key prefix and deletes those keys afterwards. Without them the
// gateway runs on its embedded stores in a temp DATA_DIR.

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { Redis } from 'ioredis';

export interface BenchStores {
  kind: { sql: 'postgres' | 'embedded'; hot: 'redis' | 'embedded' };
  /** Environment for the gateway and its CLI. */
  env: Record<string, string>;
  /** Human description for the report (no credentials). */
  description: string;
  database?: string;
  redisPrefix?: string;
  cleanup(): Promise<void>;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

export async function prepareStores(opts: {
  databaseUrl?: string;
  redisUrl?: string;
  adminUrl?: string;
  dataDir: string;
}): Promise<BenchStores> {
  const suffix = randomBytes(4).toString('hex');
  const env: Record<string, string> = { DATA_DIR: opts.dataDir };
  const cleanups: (() => Promise<void>)[] = [];
  const parts: string[] = [];
  let database: string | undefined;
  let redisPrefix: string | undefined;

  if (opts.databaseUrl) {
    database = `airouter_bench_${Date.now().toString(36)}_${suffix}`;
    const given = new URL(opts.databaseUrl);
    const adminCandidates = opts.adminUrl ? [opts.adminUrl] : [withDatabase(given, 'postgres'), opts.databaseUrl];
    let admin: postgres.Sql | undefined;
    let lastErr: unknown;
    for (const url of adminCandidates) {
      const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
      try {
        await sql`SELECT 1`;
        admin = sql;
        break;
      } catch (err) {
        lastErr = err;
        await sql.end({ timeout: 1 }).catch(() => {});
      }
    }
    if (!admin)
      throw new Error(
        `cannot reach Postgres to create the bench database (${redact(adminCandidates[0]!)}): ${(lastErr as Error)?.message}`,
      );
    await admin.unsafe(`CREATE DATABASE ${database}`);
    const adminSql = admin;
    const name = database;
    cleanups.push(async () => {
      await adminSql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminSql.end({ timeout: 5 });
    });
    env.DATABASE_URL = withDatabase(given, database);
    // Said in the report: with autovacuum off, nothing replans a statement whose plan was made
    // while its tables were empty (the usage writer guards against it; see docs/architecture.md).
    const [setting] = await admin<{ autovacuum: string }[]>`SHOW autovacuum`;
    parts.push(
      `Postgres ${given.host}, database ${database} (created for this run, dropped after; autovacuum ${setting?.autovacuum ?? 'unknown'})`,
    );
  } else {
    parts.push('embedded PGlite (no DATABASE_URL)');
  }

  if (opts.redisUrl) {
    redisPrefix = `arbench:${suffix}:`;
    env.REDIS_URL = opts.redisUrl;
    env.REDIS_PREFIX = redisPrefix;
    const url = opts.redisUrl;
    const prefix = redisPrefix;
    cleanups.push(async () => {
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      redis.on('error', () => {});
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    });
    parts.push(`Redis ${redact(url)}, key prefix ${redisPrefix} (deleted after)`);
  } else {
    parts.push('in-process hot store (no REDIS_URL)');
  }

  const sql = opts.databaseUrl ? 'postgres' : 'embedded';
  const hot = opts.redisUrl ? 'redis' : 'embedded';
  return {
    kind: { sql, hot },
    env,
    description: parts.join('; '),
    database,
    redisPrefix,
    async cleanup() {
      for (const c of cleanups.reverse())
        await c().catch((err: Error) => process.stderr.write(`bench: cleanup failed: ${err.message}\n`));
    },
  };
}

function withDatabase(url: URL, name: string): string {
  const u = new URL(url.toString());
  u.pathname = `/${name}`;
  return u.toString();
}
