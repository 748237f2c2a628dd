// Every environment variable the gateway reads, validated in one place. A bad value stops
// start-up with one line naming the variable and what is wrong with it.

import * as v from 'valibot';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { ROOT } from './paths.js';
import type { RedisTarget } from './store/redis-connect.js';
import { int, secret, url } from './env-schemas.js';
import { PAYMENT_ENV, PaymentConfigError, paymentSettings, type PaymentSettings } from './payments/settings.js';
import { parseProxyRule } from './server/client-address.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A cluster node as redis-connect.ts's parseNode reads it: host:port, or a redis:// URL of one. */
const validNode = (n: string) => /^(rediss?:\/\/([^@/]*@)?)?([^\s:@/,[\]]+|\[[0-9a-fA-F:.]+\]):\d{1,5}\/?$/.test(n);

/** Variables whose value must not appear in a start-up error. */
const SECRETS = new Set([
  'METRICS_TOKEN',
  'PROVIDER_KEY_SECRET',
  ...Object.keys(PAYMENT_ENV).filter((name) => PAYMENT_ENV[name].secret),
]);

/** A comma-separated list; each item must match `item`. */
const list = (name: string, def: string, item: RegExp, what: string) =>
  v.pipe(
    v.optional(v.string(), def),
    v.transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    ),
    v.check((xs) => xs.every((x) => item.test(x)), `${name} must be a comma-separated list of ${what}`),
  );

/** Where `npm ci` and `npm start` build the dashboard (web/build.ts). */
const DEFAULT_WEB_DIR = path.join(ROOT, 'web', 'dist');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * name → schema, and ENV_DOCS its one-line documentation (the table in docs/api.md). The
 * payment providers declare their own variables (PAYMENT_ENV); they follow these.
 */
const ENV = {
  PORT: int('PORT', 8080, 0, 65535),
  HOST: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty('HOST must not be empty')), '0.0.0.0'),
  TRUST_PROXY: v.pipe(
    v.optional(v.string(), ''),
    v.transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== ''),
    ),
    v.check(
      (xs) => xs.every((x) => parseProxyRule(x) !== undefined),
      'TRUST_PROXY must be a comma-separated list of IP addresses or CIDR blocks, e.g. 10.0.0.0/8,::1',
    ),
  ),
  WORKERS: v.pipe(
    v.optional(v.string(), '1'),
    v.trim(),
    v.regex(/^(\d+|auto)$/, 'WORKERS must be a whole number or "auto"'),
    v.transform((s) => (s === 'auto' ? availableParallelism() : Number(s))),
    v.minValue(1, 'WORKERS must be at least 1'),
    v.maxValue(256, 'WORKERS must be at most 256'),
  ),
  WORKER_SEMI_SPACE_MB: int('WORKER_SEMI_SPACE_MB', 4, 0, 1024),
  WORKER_HEARTBEAT_TIMEOUT_MS: int('WORKER_HEARTBEAT_TIMEOUT_MS', 10_000, 0, 600_000),
  DATABASE_URL: url('DATABASE_URL', ['postgres:', 'postgresql:']),
  REDIS_URL: url('REDIS_URL', ['redis:', 'rediss:']),
  REDIS_CLUSTER_NODES: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== ''),
      ),
      v.check((nodes) => nodes.length > 0, 'REDIS_CLUSTER_NODES must name at least one node'),
      v.check(
        (nodes) => nodes.every(validNode),
        'REDIS_CLUSTER_NODES must be host:port (or redis://[:password@]host:port) entries separated by commas',
      ),
    ),
  ),
  REDIS_PREFIX: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9:_.-]{0,64}$/, 'REDIS_PREFIX must be up to 64 characters of letters, digits and :_.-'),
    ),
    'ar:',
  ),
  DATA_DIR: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty('DATA_DIR must not be empty')), './data'),
  GATEWAY_CONFIG: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty('GATEWAY_CONFIG must not be empty'))),
  WEB_DIR: v.optional(v.pipe(v.string(), v.trim())),
  LOG_LEVEL: v.optional(v.picklist(LOG_LEVELS, `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`), 'info'),
  MAX_BODY_BYTES: int('MAX_BODY_BYTES', 16 * 1024 * 1024, 1024, 512 * 1024 * 1024),
  MAX_HEADER_BYTES: int('MAX_HEADER_BYTES', 16 * 1024, 1024, 1024 * 1024),
  UPSTREAM_CONNECT_TIMEOUT_MS: int('UPSTREAM_CONNECT_TIMEOUT_MS', 5_000, 1, 600_000),
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: int('UPSTREAM_FIRST_BYTE_TIMEOUT_MS', 120_000, 1, 3_600_000),
  UPSTREAM_IDLE_TIMEOUT_MS: int('UPSTREAM_IDLE_TIMEOUT_MS', 120_000, 1, 3_600_000),
  UPSTREAM_CONNECTIONS: int('UPSTREAM_CONNECTIONS', 1024, 1, 100_000),
  UPSTREAM_IDLE_CONNECTIONS: int('UPSTREAM_IDLE_CONNECTIONS', 256, 0, 100_000),
  ROUTE_COOLDOWN_MS: int('ROUTE_COOLDOWN_MS', 30_000, 0, 3_600_000),
  PUBLIC_URL: url('PUBLIC_URL', ['http:', 'https:']),
  SHUTDOWN_TIMEOUT_MS: int('SHUTDOWN_TIMEOUT_MS', 15_000, 0, 600_000),
  KEY_CACHE_TTL_MS: int('KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
  KEY_CACHE_MAX: int('KEY_CACHE_MAX', 100_000, 100, 10_000_000),
  DATABASE_POOL_SIZE: int('DATABASE_POOL_SIZE', 10, 1, 1_000),
  USAGE_RETENTION_DAYS: int('USAGE_RETENTION_DAYS', 0, 0, 100_000),
  PASSWORD_HASH_COST: int('PASSWORD_HASH_COST', 15, 10, 20),
  RESERVATION_TTL_MS: int('RESERVATION_TTL_MS', 30 * 60_000, 1_000, 24 * 3_600_000),
  LEASE_WINDOW_MS: int('LEASE_WINDOW_MS', 2_000, 0, 60_000),
  LEASE_REQUESTS: int('LEASE_REQUESTS', 32, 1, 10_000),
  USAGE_FLUSH_MS: int('USAGE_FLUSH_MS', 50, 1, 60_000),
  USAGE_FLUSH_MAX_MS: int('USAGE_FLUSH_MAX_MS', 250, 1, 60_000),
  USAGE_BATCH_MAX: int('USAGE_BATCH_MAX', 1000, 1, 100_000),
  OUTBOX_MAX: int('OUTBOX_MAX', 100_000, 0, 100_000_000),
  REFUSALS_LOGGED_PER_MINUTE: int('REFUSALS_LOGGED_PER_MINUTE', 30, 0, 100_000),
  MAX_N: int('MAX_N', 8, 1, 128),
  MAX_MESSAGES: int('MAX_MESSAGES', 20_000, 1, 10_000_000),
  MAX_JSON_DEPTH: int('MAX_JSON_DEPTH', 64, 8, 10_000),
  MAX_JSON_CONTAINERS: int('MAX_JSON_CONTAINERS', 100_000, 100, 100_000_000),
  FREE_CONCURRENCY: int('FREE_CONCURRENCY', 4, 1, 10_000),
  FREE_BYTES_PER_MINUTE: int('FREE_BYTES_PER_MINUTE', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
  ANTHROPIC_VERSIONS: list(
    'ANTHROPIC_VERSIONS',
    '2023-06-01,2026-10-21',
    /^\d{4}-\d{2}-\d{2}$/,
    'dates like 2023-06-01',
  ),
  ANTHROPIC_PRICED_BETAS: list(
    'ANTHROPIC_PRICED_BETAS',
    'fast-mode-*',
    /^[A-Za-z0-9._-]{1,100}\*?$/,
    'beta names or prefixes ending in *',
  ),
  REDIS_TIMEOUT_MS: int('REDIS_TIMEOUT_MS', 2000, 50, 60_000),
  SETTLE_WAIT_MS: int('SETTLE_WAIT_MS', 5000, 0, 120_000),
  PING_INTERVAL_MS: int('PING_INTERVAL_MS', 10_000, 100, 600_000),
  RESPONSES_TTL_DAYS: int('RESPONSES_TTL_DAYS', 30, 1, 3650),
  RESPONSES_STORE_MAX_BYTES: int('RESPONSES_STORE_MAX_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  RESPONSES_STORE_QUOTA_BYTES: int('RESPONSES_STORE_QUOTA_BYTES', 1024 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
  METRICS_TOKEN: secret('METRICS_TOKEN', 16),
  PROVIDER_KEY_SECRET: secret('PROVIDER_KEY_SECRET', 32),
  OPS_PORT: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^\d+$/, 'OPS_PORT must be a whole number'),
      v.transform(Number),
      v.minValue(1, 'OPS_PORT must be at least 1'),
      v.maxValue(65535, 'OPS_PORT must be at most 65535'),
    ),
  ),
  SMTP_URL: url('SMTP_URL', ['smtp:', 'smtps:']),
  MAIL_FROM: v.optional(v.string(), 'airouter <no-reply@localhost>'),
  LOGIN_MAX_ATTEMPTS: int('LOGIN_MAX_ATTEMPTS', 10, 1, 10_000),
  LOGIN_WINDOW_S: int('LOGIN_WINDOW_S', 900, 1, 86_400),
  SESSION_TTL_S: int('SESSION_TTL_S', 7 * 86_400, 60, 365 * 86_400),
  ALERT_CHECK_MS: int('ALERT_CHECK_MS', 30_000, 100, 3_600_000),
  ALERT_DEPOSIT_UNPAID_S: int('ALERT_DEPOSIT_UNPAID_S', 3600, 1, 30 * 86_400),
  ALERT_ROUTE_COOLDOWN_S: int('ALERT_ROUTE_COOLDOWN_S', 600, 1, 7 * 86_400),
  DEPOSIT_EXPIRY_S: int('DEPOSIT_EXPIRY_S', 900, 1, 7 * 86_400),
  DEPOSIT_MAX_OPEN: int('DEPOSIT_MAX_OPEN', 5, 1, 1000),
};

const CORE_DOCS: Record<keyof typeof ENV, string> = {
  PORT: 'HTTP port (default 8080; 0 picks a free one).',
  HOST: 'Address to listen on (default 0.0.0.0).',
  TRUST_PROXY:
    'Reverse proxies whose X-Forwarded-For is believed: comma-separated IPv4/IPv6 addresses or CIDR blocks (default none). A request from one of them is counted (login and signup limits, logs, payment notifications) as coming from the rightmost X-Forwarded-For address that is not itself listed; from any other peer the header is ignored.',
  WORKERS: 'Gateway processes sharing the port (default 1; "auto" = one per core). The embedded stores force 1.',
  WORKER_SEMI_SPACE_MB:
    "V8 semi-space of each cluster worker, MB (default 4; 0 = V8's own: 16 on Node 20, 32 on Node 24, 64-bit). Smaller holds less memory per open stream; larger spends less CPU collecting (16: 5–10 % less worker CPU on paced streams and about 3 % more non-stream throughput, for 7–8 KB more per open stream). A --max-semi-space-size given to node or in NODE_OPTIONS wins.",
  WORKER_HEARTBEAT_TIMEOUT_MS:
    'With WORKERS > 1, the primary asks each worker for a heartbeat over the cluster channel and kills (then replaces) one that has not answered for this long, e.g. an event loop stuck in a computation (default 10000; 0 = off).',
  DATABASE_URL: 'Postgres URL. Absent: embedded PGlite under DATA_DIR.',
  REDIS_URL: 'Redis URL. Absent: in-process hot store (single process).',
  REDIS_CLUSTER_NODES:
    'A Redis Cluster instead of one Redis: some of its nodes as host:port, comma-separated (the rest are found from them). Not with REDIS_URL.',
  REDIS_PREFIX: 'Prefix of every Redis key and channel (default "ar:"), so gateways can share a Redis.',
  DATA_DIR: 'Where the embedded Postgres keeps its files (default ./data).',
  GATEWAY_CONFIG:
    'Providers and models JSON file (default ./gateway.config.json when present, else the built-in example catalogue).',
  WEB_DIR:
    'The built web dashboard served at / (default web/dist in the package, built by npm ci and npm start). A folder without a build: no dashboard, a warning at start.',
  LOG_LEVEL: 'pino level: fatal, error, warn, info (default), debug, trace, silent.',
  MAX_BODY_BYTES: 'Largest accepted request body (default 16 MiB); larger gets 413.',
  MAX_HEADER_BYTES:
    "Largest accepted request head, request line and headers (default 16 KiB, as Node's own server; uWS alone allows 4 KiB); larger gets 431 from the HTTP server. Sets UWS_HTTP_MAX_HEADERS_SIZE, which wins when given.",
  UPSTREAM_CONNECT_TIMEOUT_MS: 'Time to open a connection to an upstream (default 5000).',
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "Time from sending the request to the upstream answer's headers (default 120000).",
  UPSTREAM_IDLE_TIMEOUT_MS: 'Longest silence inside an upstream answer body (default 120000).',
  UPSTREAM_CONNECTIONS: 'Keep-alive connections per upstream origin (default 1024).',
  UPSTREAM_IDLE_CONNECTIONS:
    'Free keep-alive connections kept open per upstream origin (default 256); one that comes free past this is closed, so a burst of streams does not leave thousands of idle sockets behind.',
  ROUTE_COOLDOWN_MS: 'How long a failing route is skipped (default 30000).',
  PUBLIC_URL:
    'Public base URL: verification links, payment notification URLs {PUBLIC_URL}/api/payments/{provider}/notify, checkout redirects (default http://localhost:PORT).',
  SHUTDOWN_TIMEOUT_MS: 'On SIGTERM, how long in-flight requests may take to finish (default 15000).',
  KEY_CACHE_TTL_MS: 'In-process cache of key lookups (default 30000; revocations are pushed at once anyway).',
  KEY_CACHE_MAX:
    'Keys each gateway process remembers (default 100000; about 0.5 KB a key, some 48 MB full; when full, the half least recently met is let go at once). A key it no longer holds costs one Redis read, and one Postgres query shared by every key looked up in the same event-loop turn.',
  USAGE_RETENTION_DAYS:
    "How many days the usage log keeps each request (usage records and refusals); older ones are deleted every hour (default 0: kept for ever), and a month of the usage records' partitions that this leaves empty is dropped. The totals (usage stats, the overview, admin reports, spend caps) are kept for ever, and `reconcile` stays exact: a record goes only once reconcile's checkpoint has passed it, its charge kept with the sums.",
  DATABASE_POOL_SIZE:
    "Postgres connections each gateway process (and each worker) keeps (default 10). The request path needs few: usage records are written in batches and cold keys and accounts are read in batches; keep WORKERS × this under the server's max_connections.",
  PASSWORD_HASH_COST:
    'scrypt cost of new password hashes, as log2 of N (default 15: 32 MiB and about 0.1 s a hash). Each hash records its own cost, so a change applies to passwords set afterwards and every stored one still verifies. Lower only to speed up tests.',
  RESERVATION_TTL_MS: 'A balance reservation left by a crashed process expires after this (default 1800000).',
  LEASE_WINDOW_MS:
    'Requests of keys without limits take their hold from a lease: a standing hold of the process on the balance, renewed by one store call at least this often (default 2000; 0 = a store call per request). Leases idle this long are handed back.',
  LEASE_REQUESTS:
    "A lease is topped up to this many of the current request's worst case (default 32), and never by more than an eighth of what the balance has available.",
  USAGE_FLUSH_MS:
    'Shortest pause between two usage writes to Postgres when the outbox is nearly empty, so records gather into batches (default 50). A longer pause makes fewer, larger transactions, each a burst of Postgres work that requests wait behind when the cores are shared.',
  USAGE_FLUSH_MAX_MS:
    "Longest such pause (default 250; below USAGE_FLUSH_MS it counts as USAGE_FLUSH_MS). Between the two, the pause follows the rate records arrive at, aiming at about 100 records a transaction: at a few hundred requests a second that is a few transactions a second instead of twenty; usage reaches Postgres (and the dashboard's log) up to this much later.",
  USAGE_BATCH_MAX: 'Largest batch of usage records per Postgres transaction (default 1000).',
  OUTBOX_MAX:
    "Usage records allowed to wait for Postgres (it is down, or the writers are behind) in each of the 16 outbox shards before new requests of that shard's users get 503 (default 100000; 0 = no bound). Redis holds about 400 bytes a record: 16 full shards are 640 MB. The in-process store has one outbox.",
  REFUSALS_LOGGED_PER_MINUTE:
    "Refused inference requests (after the key was identified: 400, 402, 404, 413, 429, upstream refusals) logged one by one in the user's usage log, per key and minute across every gateway process (default 30; 0 = none logged). Past it they are counted on one row per key, minute and status. They cost $0 and never touch a balance.",
  MAX_N:
    'Most choices (`n`) one chat request may ask for (default 8); a model may set a lower `max_n` in the catalogue.',
  MAX_MESSAGES: 'Most messages in one inference request (default 20000); more gets 400.',
  MAX_JSON_DEPTH: 'Deepest nesting of objects and arrays in an inference body (default 64); deeper gets 400.',
  MAX_JSON_CONTAINERS:
    'Most objects and arrays in one inference body (default 100000); more gets 400 before the body is parsed.',
  FREE_CONCURRENCY:
    'Unbilled requests (count_tokens, GET and DELETE of stored responses) one key may have in progress at once in each gateway process (default 4); past it, 429. COUNT_TOKENS_CONCURRENCY, its earlier name, is read when it is not set.',
  FREE_BYTES_PER_MINUTE:
    'Bytes those unbilled requests of one key may move a minute in each gateway process, bodies in and stored answers out (default 16777216, 16 MiB); past it, 429 with retry-after, decided before the body is read; one larger than that, 413.',
  ANTHROPIC_VERSIONS:
    'anthropic-version values forwarded to Anthropic upstreams as sent (comma-separated; default 2023-06-01,2026-10-21); any other valid date is replaced by the first.',
  ANTHROPIC_PRICED_BETAS:
    "anthropic-beta values that change what Anthropic bills, refused (400) unless the model's catalogue entry lists them in priced_betas: comma-separated names or prefixes ending in * (default fast-mode-*). Every other beta is forwarded to Anthropic upstreams as sent; context-1m-* needs the model's long_context pricing.",
  SETTLE_WAIT_MS:
    "How long an answer in hand keeps trying to have its charge taken while Redis cannot be reached, before it is refused with 503 (default 5000): set it above a Redis Cluster's failover time (cluster-node-timeout and a second or two) so that a failover refuses no answer it charged.",
  REDIS_TIMEOUT_MS:
    'Time allowed to connect to Redis and for each command; past it a request gets 503 (default 2000). At start-up a Redis that does not answer in time is asked again for up to 10 s.',
  PING_INTERVAL_MS: 'Messages-surface streams send a ping after this much silence (default 10000).',
  RESPONSES_TTL_DAYS:
    'Responses-surface answers (store, the default) are kept this many days for previous_response_id and GET /v1/responses/{id} (default 30); expired ones are deleted every ten minutes.',
  RESPONSES_STORE_MAX_BYTES:
    'Largest stored Responses answer, its input (history included) and response object together, as JSON (default 16777216, 16 MiB). A request that would store more is refused (400) unless it sends store: false; an answer that turns out larger is served and not kept.',
  RESPONSES_STORE_QUOTA_BYTES:
    "What one user's stored Responses answers may take together, as JSON, until they expire or are deleted (default 1073741824, 1 GiB). Past it, a request with store: true is refused (400); store: false still works.",
  PROVIDER_KEY_SECRET:
    "Seals the provider API keys saved in the console (AES-256-GCM, 32+ characters, e.g. `openssl rand -base64 32`); the same on every gateway host. Unset with the embedded Postgres: one is made in DATA_DIR/provider-key.secret. Unset with DATABASE_URL: the console cannot save keys (keys from the catalogue's `api_key.env` still work).",
  METRICS_TOKEN:
    'Bearer token (16+ characters) for GET /metrics and the details of GET /readyz on the public port. Unset: /metrics there is 403 and /readyz gives its status only.',
  OPS_PORT:
    'Port on 127.0.0.1 serving /healthz, /readyz with details and /metrics without a token (every worker shares it). Unset: no such listener.',
  SMTP_URL: 'SMTP server for verification mail (smtp:// or smtps://). Absent: the link is logged.',
  MAIL_FROM: 'Sender of verification mail.',
  LOGIN_MAX_ATTEMPTS:
    'Failed logins allowed per client address and per address and email in the window (default 10); per email from all addresses together, ten times as many. Signups: this many per address and per email.',
  LOGIN_WINDOW_S: 'Login rate-limit window in seconds (default 900).',
  SESSION_TTL_S: 'Dashboard session lifetime in seconds (default 604800).',
  ALERT_CHECK_MS:
    "How often each gateway process looks for alerts to mail (a user's low balance, unpaid or failed deposits, routes stuck in cooldown), in ms (default 30000). Each alert is claimed in Postgres, so it is mailed once however many processes look.",
  ALERT_DEPOSIT_UNPAID_S:
    'A deposit still pending this many seconds after it was opened is mailed to the admins (default 3600); a failed one at once.',
  ALERT_ROUTE_COOLDOWN_S:
    'A route that has failed every attempt and kept cooling down for this many seconds is mailed to the admins (default 600).',
  DEPOSIT_EXPIRY_S:
    'How long a deposit invoice can be paid, in seconds (default 900); then the sweeper marks it expired.',
  DEPOSIT_MAX_OPEN: 'Unpaid, unexpired deposits a user may have open at once (default 5); past it, 429.',
};

export const ENV_DOCS: Readonly<Record<string, string>> = {
  ...CORE_DOCS,
  ...Object.fromEntries(Object.entries(PAYMENT_ENV).map(([name, x]) => [name, x.doc])),
};

const EnvSchema = v.object(ENV);
export type Env = v.InferOutput<typeof EnvSchema>;
/** Checked in one pass, so the first wrong variable in the documented order is the one named. */
const AllEnvSchema = v.object({
  ...EnvSchema.entries,
  ...Object.fromEntries(Object.entries(PAYMENT_ENV).map(([name, x]) => [name, x.schema])),
});

export interface Config extends Env {
  /** Resolved absolute DATA_DIR. */
  dataDir: string;
  /** Resolved absolute WEB_DIR. */
  webDir: string;
  publicUrl: string;
  embeddedSql: boolean;
  embeddedHot: boolean;
  /** The hot store's Redis: a URL, or a cluster's seed nodes; absent for the in-process one. */
  redis: RedisTarget | undefined;
  /** The deposit methods this configuration enables, with their parameters. */
  payments: PaymentSettings;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string | undefined> = {};
  for (const name of Object.keys(AllEnvSchema.entries)) {
    // An empty variable means "unset", as shells and compose files commonly produce them.
    const value = env[name];
    picked[name] = value === '' ? undefined : value;
  }
  picked.FREE_CONCURRENCY ??= env.COUNT_TOKENS_CONCURRENCY || undefined;
  const result = v.safeParse(AllEnvSchema, picked);
  if (!result.success) {
    const issue = result.issues[0];
    const name = String(issue.path?.[0]?.key ?? 'environment');
    const got = picked[name];
    const message = issue.message.startsWith(name) ? issue.message : `${name}: ${issue.message}`;
    const echo = got === undefined || SECRETS.has(name) ? '' : ` (got ${JSON.stringify(got)})`;
    throw new ConfigError(`Invalid environment: ${message}${echo}`);
  }
  const e = result.output as Env & Record<string, unknown>;
  const embeddedSql = !e.DATABASE_URL;
  if (e.REDIS_URL && e.REDIS_CLUSTER_NODES)
    throw new ConfigError(
      'Invalid environment: set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both',
    );
  const embeddedHot = !e.REDIS_URL && !e.REDIS_CLUSTER_NODES;
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT || 8080}`).replace(/\/+$/, '');
  let payments: PaymentSettings;
  try {
    payments = paymentSettings(e, publicUrl);
  } catch (err) {
    if (err instanceof PaymentConfigError) throw new ConfigError(`Invalid environment: ${err.message}`);
    throw err;
  }
  return {
    ...e,
    // The embedded stores live inside one process, so they cannot be shared by workers.
    WORKERS: embeddedSql || embeddedHot ? 1 : e.WORKERS,
    dataDir: path.resolve(e.DATA_DIR),
    webDir: e.WEB_DIR ? path.resolve(e.WEB_DIR) : DEFAULT_WEB_DIR,
    publicUrl,
    embeddedSql,
    embeddedHot,
    redis: e.REDIS_CLUSTER_NODES ?? e.REDIS_URL,
    payments,
  };
}
