// Postgres access. With DATABASE_URL, a real server; without it, PGlite (Postgres compiled
// to WebAssembly) behind its socket server, so the very same `postgres` client and SQL serve
// both and nothing above this file knows the difference.

import postgres from 'postgres';
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';

export type Sql = postgres.Sql<{ bigint: bigint }>;
/** A transaction on the pool (what `sql.begin` hands its callback). */
export type Tx = postgres.TransactionSql<{ bigint: bigint }>;

export interface SqlStore {
  sql: Sql;
  embedded: boolean;
  close(): Promise<void>;
}

export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}

const clientOptions = {
  onnotice: () => {},
  types: { bigint: postgres.BigInt },
  // Surfaces stay responsive when Postgres is down: queries fail instead of queueing forever.
  connect_timeout: 5,
} as const;

export async function openSql(opts: { databaseUrl?: string; dataDir: string; max?: number }): Promise<SqlStore> {
  if (opts.databaseUrl) {
    // No JIT: a statement whose estimate runs high (a table not analyzed yet, a partition just
    // made) was compiled for 470 ms before a request's key lookup ran, where its plan takes under
    // a millisecond. The one statement long enough to gain from a compile, reconcile --full's
    // sum of every record, runs about a tenth slower without (docs/performance.md).
    const sql = postgres(opts.databaseUrl, {
      ...clientOptions,
      max: opts.max ?? 10,
      connection: { jit: 'off' },
    }) as unknown as Sql;
    return { sql, embedded: false, close: () => sql.end({ timeout: 5 }) };
  }
  return openEmbedded(opts.dataDir);
}

/** The embedded database belongs to one process at a time; the pid file says which. */
function claimDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const pidFile = path.join(dir, 'airouter.pid');
  let holder: number | undefined;
  try {
    holder = Number(readFileSync(pidFile, 'utf8').trim());
  } catch {
    holder = undefined;
  }
  if (holder && holder !== process.pid && isAlive(holder)) {
    throw new StoreError(
      `the embedded database in ${dir} is in use by process ${holder} (a running gateway); stop it first, or set DATABASE_URL to share a Postgres server`,
    );
  }
  writeFileSync(pidFile, String(process.pid));
  return () => rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function openEmbedded(dataDir: string): Promise<SqlStore> {
  const release = claimDataDir(dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    // The extensions the migrations create (sql/030: the admin's user search).
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    const db = await PGlite.create({ dataDir: path.join(dataDir, 'pg'), extensions: { pg_trgm } });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await server.start();
    const conn = server.getServerConn();
    // PGlite runs one query at a time; a single client connection keeps transactions intact.
    const sql = postgres(`postgres://postgres@${conn}/postgres`, {
      ...clientOptions,
      max: 1,
      ssl: false,
    }) as unknown as Sql;
    return {
      sql,
      embedded: true,
      async close() {
        await sql.end({ timeout: 5 });
        await server.stop();
        await db.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
