// `airouter serve`: one gateway process, or a primary that runs WORKERS of them on the same
// port (uWS listens with SO_REUSEPORT, so the kernel spreads connections across workers).

import cluster, { type Worker } from 'node:cluster';
import { createKey } from '../accounts/keys.js';
import { randomBase62 } from '../wire.js';
import { recordAudit } from '../admin/audit.js';
import { setPasswordHashCost } from '../accounts/passwords.js';
import { createVerifiedUser, creditUser, watchCredits } from '../accounts/users.js';
import { nanoToUsd, usdToNano } from '../billing/money.js';
import type { Config } from '../config.js';
import type { RunningGateway } from '../gateway.js';
import { createLogger } from '../log.js';
import { gatewayWriter } from '../billing/outbox-writer.js';
import { openStores, type Stores } from '../store/index.js';
import { checkUwsLoads } from '../runtime.js';
import { controlRunner } from './commands.js';
import { serveControl, storesOf } from './control.js';
import { serveClusterMetrics } from '../server/cluster-metrics.js';
import { OutboxMetrics } from '../server/metrics.js';
import { Registry } from 'prom-client';

// An address the dashboard accepts (a dotted domain), under a name reserved for this machine
// (RFC 6761 .localhost), so that the operator can sign in with it.
export const FIRST_START_EMAIL = 'admin@airouter.localhost';
const FIRST_START_CREDIT = usdToNano('10');

/**
 * On an empty embedded store, make the newcomer's first curl work and give them the operator's
 * screens: an admin with a credit, a password and a key, the secrets printed once.
 */
async function firstStart(running: RunningGateway): Promise<void> {
  const { sql, hot } = running.services;
  const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM users`;
  if (n > 0) return;
  const password = randomBase62(20);
  const user = await createVerifiedUser(sql, FIRST_START_EMAIL, password);
  await sql`UPDATE users SET is_admin = true WHERE id = ${user.id}`;
  await recordAudit(
    sql,
    { id: null, label: 'first start' },
    { action: 'user.promote', target: FIRST_START_EMAIL, before: { admin: false }, after: { admin: true } },
  );
  await creditUser(sql, hot, user.id, FIRST_START_CREDIT, {
    method: 'operator',
    amount: nanoToUsd(FIRST_START_CREDIT),
    currency: 'USD',
    details: { reason: 'first start' },
  });
  const key = await createKey(sql, user.id, 'first start');
  process.stdout.write(
    `\nFirst start on the embedded store: created the admin ${FIRST_START_EMAIL} with $${nanoToUsd(FIRST_START_CREDIT)} of credit.\n` +
      `Dashboard sign-in at ${running.services.config.publicUrl}/login, password (shown once): ${password}\n` +
      `Its API key (shown once):\n${key.key}\n\n`,
  );
}

export async function serve(config: Config): Promise<void> {
  const log = createLogger(config.LOG_LEVEL, cluster.isWorker ? { worker: cluster.worker?.id } : {});
  // A cluster's primary runs the command line's user commands itself.
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  if (config.WORKERS > 1 && cluster.isPrimary) return supervise(config, log);

  // The primary of a cluster never loads the server itself: it only supervises.
  const { startGateway } = await import('../gateway.js');
  // A cluster's workers leave the outbox writer to their primary (see supervise).
  const running = await startGateway(config, log, undefined, { writer: !cluster.isWorker });
  if (running.stores.embeddedSql) await firstStart(running);
  // Only a real Postgres can have another process crediting (the embedded one is ours alone,
  // see claimDataDir), and PGlite's socket server takes one connection, so LISTEN would hang.
  else await watchCredits(running.services.sql, running.services.hot);
  // A cluster's workers leave the command line to their primary, which owns no server to stop.
  const control = cluster.isWorker ? null : await openControl(config, running.stores, log);
  if (cluster.isWorker) process.send?.({ type: 'listening', port: running.port });
  else
    process.stdout.write(
      `airouter listening on http://${config.HOST === '0.0.0.0' ? 'localhost' : config.HOST}:${running.port}\n`,
    );

  process.on('SIGHUP', () => running.reloadCatalogue());
  const stop = () => {
    (control?.close() ?? Promise.resolve())
      .then(() => running.stop())
      .then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  // `on`, not `once`: a repeated signal must not kill the process (the default action) halfway
  // through the stop, losing the queued usage records; stop() runs once however often it is called.
  process.on('SIGTERM', stop);
  // A worker whose primary is gone (killed outright) must not keep serving on its own.
  if (cluster.isWorker) process.on('disconnect', stop);
  // The primary's heartbeat (see watchHeartbeats), answered from this event loop: an answer
  // that does not come means the loop is stuck, which no exit event would ever tell it.
  if (cluster.isWorker) {
    process.on('message', (msg: { type?: string }) => {
      if (msg?.type === HEARTBEAT) process.send?.(msg);
    });
  }
  process.on('SIGINT', stop);
}

/** The command line's way in (./control.ts); a gateway that cannot open it still serves. */
function openControl(config: Config, stores: Stores, log: ReturnType<typeof createLogger>) {
  return serveControl(
    config.dataDir,
    storesOf(config),
    controlRunner(stores, { configPath: config.GATEWAY_CONFIG }),
    (msg) => log.warn(msg),
  ).catch((err: unknown) => {
    log.warn({ err }, 'control socket not opened; the command line will open the stores itself');
    return null;
  });
}

/**
 * Node flags for the cluster's workers: the primary's own, plus the young generation's size
 * unless the operator chose one. V8's default (16 MB semi-spaces on Node 20, 32 MB on Node 24)
 * lets a worker's heap run
 * hundreds of MB ahead of what is live under thousands of open streams; at 4 MB the bench's
 * 10,000 streams peaked about 80 MB lower, for about 3% of non-stream throughput.
 */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string, semiSpaceMb: number): string[] {
  const chosen = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => /^--max[-_]semi[-_]space[-_]size\b/.test(a));
  return chosen || semiSpaceMb === 0 ? [...execArgv] : [...execArgv, `--max-semi-space-size=${semiSpaceMb}`];
}

const HEARTBEAT = 'airouter:heartbeat';

/**
 * Kills a listening worker that has not answered a heartbeat for `timeoutMs`: a worker whose
 * event loop is stuck (a runaway computation, a SIGSTOP) is alive, so the cluster never sees it
 * exit, yet the kernel keeps handing it a share of the port's connections, which wait forever.
 * Killed, it exits, and the exit handler starts another. Workers are watched from their
 * 'listening' message on, since starting (migrations, loading) may legitimately take longer.
 */
function watchHeartbeats(
  timeoutMs: number,
  log: ReturnType<typeof createLogger>,
): { watch: (w: Worker) => void; stop: () => void } {
  const lastSeen = new Map<Worker, number>();
  const tick = setInterval(
    () => {
      const now = Date.now();
      for (const [w, seen] of lastSeen) {
        if (w.isDead()) {
          lastSeen.delete(w);
        } else if (now - seen > timeoutMs) {
          lastSeen.delete(w);
          log.error(
            { worker: w.id, pid: w.process.pid, silentMs: now - seen },
            'worker stopped answering its heartbeat; killing it',
          );
          w.process.kill('SIGKILL');
        } else if (w.isConnected()) {
          w.send({ type: HEARTBEAT });
        }
      }
    },
    Math.max(25, Math.floor(timeoutMs / 4)),
  );
  tick.unref();
  cluster.on('message', (w, msg: { type?: string }) => {
    if (msg?.type === HEARTBEAT && lastSeen.has(w)) lastSeen.set(w, Date.now());
  });
  return {
    watch: (w) => {
      if (timeoutMs > 0) lastSeen.set(w, Date.now());
    },
    stop: () => {
      clearInterval(tick);
      lastSeen.clear();
    },
  };
}

async function supervise(config: Config, log: ReturnType<typeof createLogger>): Promise<void> {
  // A runtime whose uWS binary does not load would have every worker die at start, and be
  // restarted, forever: stop here, once, with the reason.
  checkUwsLoads();
  // Migrate once here, so workers never queue on the migration lock at start.
  const stores = await openStores(config);
  // The outbox writer runs here, not in the workers: committing a batch means handling a
  // thousand records at once, which on a worker's event loop would hold up every request
  // behind it (p99 at a fixed 5,600 req/s: 27 → 20 ms when it moved). WORKERS > 1 needs the external
  // stores, whose settles are durable in Redis without waiting for this writer.
  const registry = new Registry();
  const writer = gatewayWriter(
    stores.sql,
    stores.hot,
    log,
    config,
    new OutboxMetrics(registry, () => stores.hot.outboxLength()).observer,
  );
  writer.start();
  serveClusterMetrics(registry);
  const control = await openControl(config, stores, log);
  let stopping = false;
  let closed: Promise<void> | undefined;
  // Once every worker is gone their last charges are in the outbox: written, then exit.
  const finish = () => {
    closed ??= (control?.close() ?? Promise.resolve())
      .then(() => writer.stop())
      .then(() => stores.close())
      .catch((err) => log.error({ err }, 'outbox writer stop failed'))
      .finally(() => process.exit(0));
  };
  cluster.setupPrimary({
    execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS ?? '', config.WORKER_SEMI_SPACE_MB),
  });
  const fork = () => cluster.fork();
  for (let i = 0; i < config.WORKERS; i++) fork();
  let listening = 0;
  const heartbeats = watchHeartbeats(config.WORKER_HEARTBEAT_TIMEOUT_MS, log);
  cluster.on('message', (w, msg: { type?: string; port?: number }) => {
    if (msg?.type === 'listening') heartbeats.watch(w);
    if (msg?.type === 'listening' && ++listening === config.WORKERS) {
      process.stdout.write(`airouter listening on port ${msg.port} with ${config.WORKERS} workers\n`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) finish();
      return;
    }
    log.error({ worker: worker.id, code, signal }, 'worker died; starting another');
    setTimeout(fork, 500);
  });
  const stopAll = () => {
    stopping = true;
    // A worker finishing its requests may take SHUTDOWN_TIMEOUT_MS; it is not stuck.
    heartbeats.stop();
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) finish();
    for (const w of workers) w?.process.kill('SIGTERM');
  };
  process.once('SIGTERM', stopAll);
  process.once('SIGINT', stopAll);
  process.on('SIGHUP', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGHUP');
  });
}
