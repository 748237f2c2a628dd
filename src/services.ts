// What every route handler is given: the gateway's services, built and owned by gateway.ts.
// A file of its own so that the handlers depend on it, not on the composition root that
// registers them.

import type { Logger } from 'pino';
import type { KeyResolver } from './accounts/keys.js';
import type { Ledger } from './billing/ledger.js';
import type { OutboxWriter } from './billing/outbox-writer.js';
import type { CatalogueHolder } from './catalogue/index.js';
import type { Config } from './config.js';
import type { Admission } from './inference/admission.js';
import type { RefusalLog } from './inference/refusal-log.js';
import type { Payments } from './payments/service.js';
import type { Metrics } from './server/metrics.js';
import type { HotStore } from './store/hot.js';
import type { Sql } from './store/sql.js';
import type { RouteSelector } from './upstream/router.js';

export interface Gateway {
  config: Config;
  log: Logger;
  sql: Sql;
  hot: HotStore;
  catalogue: CatalogueHolder;
  keys: KeyResolver;
  ledger: Ledger;
  /** Drains the usage outbox into Postgres. */
  outbox: OutboxWriter;
  /** Refused inference requests for the user's usage log; never money. */
  refusals: RefusalLog;
  /** Each key's share of this process for the requests nothing bills (inference/admission.ts). */
  admission: Admission;
  metrics: Metrics;
  routes: RouteSelector;
  payments: Payments;
  startedAt: number;
  stopping: boolean;
}
