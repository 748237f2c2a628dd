// Composition root: opens the stores, builds the services and the uWS app, and owns the
// lifecycle (listen, SIGHUP reload, graceful stop).

import type { Logger } from 'pino';
import type { Gateway } from './services.js';
import { CatalogueHolder } from './catalogue/index.js';
import { startCatalogueSync } from './catalogue/stored.js';
import type { Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import { KeyResolver } from './accounts/keys.js';
import { setPasswordHashCost } from './accounts/passwords.js';
import { Ledger } from './billing/ledger.js';
import { commitEntries, gatewayWriter } from './billing/outbox-writer.js';
import { registerInference } from './inference/routes.js';
import { Admission } from './inference/admission.js';
import { RefusalLog } from './inference/refusal-log.js';
import { registerDashboard } from './dashboard/routes.js';
import { registerAdmin } from './admin/routes.js';
import { startAlerts } from './admin/alerts.js';
import { createMailer } from './dashboard/mail.js';
import { registerPayments } from './payments/routes.js';
import { Payments } from './payments/service.js';
import { startSweeper } from './payments/sweeper.js';
import { startResponsesSweeper } from './responses/store.js';
import { startRetention } from './billing/retention.js';
import { Metrics, OutboxMetrics } from './server/metrics.js';
import { exposeToCluster } from './server/cluster-metrics.js';
import { registerOps } from './server/ops.js';
import { Router } from './server/router.js';
import { registerStatic } from './server/static.js';
import { TrustedProxies } from './server/client-address.js';
import { loadUws, type us_listen_socket } from './server/uws.js';
import { openStores, type Stores } from './store/index.js';
import { RedisHotStore } from './store/hot-redis.js';
import { UpstreamClient } from './upstream/client.js';
import { RouteSelector } from './upstream/router.js';
import { RouteHealth } from './upstream/health.js';
import { openVault } from './upstream/key-vault.js';
import { ProviderKeys } from './upstream/provider-keys.js';

const OPS_HOST = '127.0.0.1';

export interface RunningGateway {
  /** What every handler is given (src/services.ts). */
  services: Gateway;
  port: number;
  stores: Stores;
  /** Stop accepting, let in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), flush, close. */
  stop(): Promise<void>;
  reloadCatalogue(): { ok: true } | { ok: false; error: string };
}

export interface GatewayOptions {
  /**
   * Run the outbox writer in this process (the default). A cluster's workers leave it to their
   * primary (src/cli/serve.ts).
   */
  writer?: boolean;
  /** What times leases and alerts (the wall clock; tests move their own). */
  clock?: Clock;
}

export async function startGateway(
  config: Config,
  log: Logger,
  stores?: Stores,
  opts: GatewayOptions = {},
): Promise<RunningGateway> {
  const uws = loadUws({ maxHeaderBytes: config.MAX_HEADER_BYTES });
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  const catalogue = new CatalogueHolder(config.GATEWAY_CONFIG);
  const ownStores = !stores;
  stores ??= await openStores(config);
  const metrics = new Metrics();
  exposeToCluster(metrics.registry);
  const upstream = new UpstreamClient({
    connectMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
    firstByteMs: config.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
    idleMs: config.UPSTREAM_IDLE_TIMEOUT_MS,
    connections: config.UPSTREAM_CONNECTIONS,
    idleConnections: config.UPSTREAM_IDLE_CONNECTIONS,
  });
  const runWriter = opts.writer ?? true;
  const hot = stores.hot;
  const outbox = gatewayWriter(
    stores.sql,
    hot,
    log,
    config,
    runWriter ? new OutboxMetrics(metrics.registry, () => hot.outboxLength()).observer : undefined,
  );
  const health = new RouteHealth(stores.sql, log);
  health.start();
  const providerKeys = new ProviderKeys(
    stores.sql,
    openVault({ secret: config.PROVIDER_KEY_SECRET, embedded: config.embeddedSql, dataDir: config.dataDir }),
    log,
    config.ROUTE_COOLDOWN_MS,
  );
  const ledger = new Ledger(stores.sql, stores.hot, {
    ttlMs: config.RESERVATION_TTL_MS,
    outboxMax: config.OUTBOX_MAX,
    settleWaitMs: config.SETTLE_WAIT_MS,
    leases:
      config.LEASE_WINDOW_MS > 0
        ? {
            windowMs: config.LEASE_WINDOW_MS,
            requests: config.LEASE_REQUESTS,
            observer: metrics.leaseObserver,
            clock: opts.clock,
            soloFirst: true,
          }
        : undefined,
    log,
    onRetryQueue: (n) => metrics.settleRetries.set(n),
  });
  const gw: Gateway = {
    config,
    log,
    sql: stores.sql,
    hot: stores.hot,
    catalogue,
    keys: new KeyResolver(stores.sql, stores.hot, config.KEY_CACHE_TTL_MS, config.KEY_CACHE_MAX, (user, snapshot) =>
      ledger.offer(user, snapshot),
    ),
    ledger,
    outbox,
    refusals: new RefusalLog(stores.sql, log, config.REFUSALS_LOGGED_PER_MINUTE),
    admission: new Admission(
      { concurrency: config.FREE_CONCURRENCY, bytesPerMinute: config.FREE_BYTES_PER_MINUTE },
      opts.clock,
    ),
    metrics,
    routes: new RouteSelector(upstream, config.ROUTE_COOLDOWN_MS, metrics, log, health, providerKeys),
    payments: new Payments(stores.sql, stores.hot, log, config.payments),
    startedAt: Date.now(),
    stopping: false,
  };
  await gw.keys.start();
  await providerKeys.start(stores.hot);
  // An admin's saved catalogue, if any, is in force before the first request.
  await startCatalogueSync(stores.sql, stores.hot, catalogue, log);
  if (stores.hot instanceof RedisHotStore) {
    const sql = stores.sql;
    const adopted = await stores.hot.adoptLegacy((entries) => commitEntries(sql, entries));
    if (adopted > 0)
      log.warn(
        { records: adopted },
        'Redis held usage records in the layout of an older version: committed them, and dropped that layout',
      );
    await stores.hot.startWatching({
      committed: async (ids) =>
        new Set(
          (
            await sql<
              { settle_id: string }[]
            >`SELECT settle_id FROM usage_records WHERE settle_id = ANY(${ids}::uuid[])`
          ).map((r) => r.settle_id),
        ),
      onReplay: (n) =>
        log.error({ replayed: n }, 'Redis lost data (restart or flush): settled again the charges it lost'),
      // Leases are holds in Redis: a lease may be gone with the data.
      onLost: () => gw.ledger.suspendLeases(),
    });
  }
  if (runWriter) gw.outbox.start();
  gw.refusals.start();
  for (const reason of config.payments.disabled) log.warn(`deposits: ${reason}`);
  const stopSweeper = startSweeper(stores.sql, log, config.payments.expiryS);
  const stopResponsesSweeper = startResponsesSweeper(stores.sql, log, opts.clock);
  const stopRetention = startRetention(stores.sql, config.USAGE_RETENTION_DAYS, log, opts.clock);
  const stopAlerts = startAlerts(stores.sql, createMailer(config, log), config, log, opts.clock);

  const app = uws.App();
  const router = new Router(
    app,
    log,
    metrics,
    config.TRUST_PROXY.length > 0 ? new TrustedProxies(config.TRUST_PROXY) : undefined,
  );
  // The dashboard's build first: the catch-all route of ops gives browsers its not-found page.
  const webNotFound = registerStatic(router, config.webDir, log);
  registerOps(router, gw, false, webNotFound);
  registerInference(router, gw);
  // The playground calls this process's own inference surface; on every address, by loopback.
  const self = {
    host: ['0.0.0.0', '::', ''].includes(config.HOST) ? (config.HOST === '::' ? '::1' : '127.0.0.1') : config.HOST,
    port: 0,
  };
  registerDashboard(router, gw, undefined, self);
  registerAdmin(router, gw);
  registerPayments(router, gw);

  const listen = (on: typeof app, host: string, port: number) =>
    new Promise<us_listen_socket | false>((resolve) => on.listen(host, port, (socket) => resolve(socket || false)));
  const listenSocket = await listen(app, config.HOST, config.PORT);
  // The operator's listener: loopback only, so it needs no token (src/server/ops.ts).
  let opsSocket: us_listen_socket | false | undefined;
  let opsApp: typeof app | undefined;
  if (listenSocket && config.OPS_PORT !== undefined) {
    opsApp = uws.App();
    registerOps(new Router(opsApp, log, metrics), gw, true);
    opsSocket = await listen(opsApp, OPS_HOST, config.OPS_PORT);
    if (!opsSocket) uws.us_listen_socket_close(listenSocket);
  }
  if (!listenSocket || opsSocket === false) {
    stopSweeper();
    stopResponsesSweeper();
    stopRetention();
    stopAlerts();
    await gw.outbox.stop();
    await gw.refusals.stop();
    await upstream.close();
    if (ownStores) await stores.close();
    // A ConfigError, so that the command line reports it as the one line it is.
    const where = listenSocket ? `${OPS_HOST}:${config.OPS_PORT}` : `${config.HOST}:${config.PORT}`;
    throw new ConfigError(`cannot listen on ${where} (port in use?)`);
  }
  const port = uws.us_socket_local_port(listenSocket);
  self.port = port;
  log.info(
    { port, host: config.HOST, catalogue: catalogue.current.source, models: catalogue.current.list.length },
    'gateway listening',
  );

  let stopped: Promise<void> | undefined;
  return {
    services: gw,
    port,
    stores,
    reloadCatalogue() {
      const result = catalogue.reload();
      if (result.ok && catalogue.fromStore) {
        // The rule (README, "The catalogue"): once a version is saved, the file is read but not served.
        log.warn(
          { file: catalogue.current.source },
          'catalogue file checked but not in force: a catalogue saved in the console is; load the file there (Catalogue, "Load the file") or with `airouter catalogue import` to put it in force',
        );
      } else if (result.ok)
        log.info({ source: catalogue.current.source, models: catalogue.current.list.length }, 'catalogue reloaded');
      else log.error({ error: result.error }, 'catalogue reload failed; keeping the previous catalogue');
      return result;
    },
    stop() {
      stopped ??= (async () => {
        gw.stopping = true;
        uws.us_listen_socket_close(listenSocket);
        if (opsSocket) uws.us_listen_socket_close(opsSocket);
        const idle = await router.idle(config.SHUTDOWN_TIMEOUT_MS);
        if (!idle) {
          log.warn({ inflight: router.inflight }, 'shutdown timeout: closing the remaining connections');
          router.closeAll();
          await router.idle(2000);
        }
        // Idle keep-alive connections too: a client's pool learns at once that this process is
        // gone (else it holds the socket until its own keep-alive timeout, undici's 4 s).
        app.close();
        opsApp?.close();
        stopSweeper();
        stopResponsesSweeper();
        stopRetention();
        stopAlerts();
        await health.stop();
        // Open streams have finished (or were cut at the timeout): their charges are in the
        // outbox; a process that runs the writer writes what it can before it goes.
        await gw.ledger.stop();
        await gw.outbox.stop();
        await gw.refusals.stop();
        await upstream.close();
        await stores!.close();
        log.info('gateway stopped');
      })();
      return stopped;
    },
  };
}
