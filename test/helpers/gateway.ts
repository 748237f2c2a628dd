// A real gateway (uWS, real stores) started inside the test process, with a catalogue that
// points at the fake upstream, and helpers to make funded users and keys.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { createKey } from '../../src/accounts/keys.js';
import { createVerifiedUser, creditUser } from '../../src/accounts/users.js';
import { nanoToUsd, usdToNano } from '../../src/billing/money.js';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger, type Logger } from '../../src/log.js';
import { openStores } from '../../src/store/index.js';
import { METRICS_TOKEN, OPERATOR } from './http.js';
import { REDIS_URL, TEST_PASSWORD_HASH_COST, testDatabase, testRedisPrefix, uniqueName } from './stores.js';

export interface CatalogueOptions {
  /** Base URL of the fake upstream (http://127.0.0.1:PORT). */
  upstream: string;
  /** Extra models/providers merged in. */
  extra?: { providers?: unknown[]; models?: unknown[] };
}

export const PRICES = {
  pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 },
  official_pricing: { input: 1.25, output: 2.5, cache_read: 0.125, cache_write: 1.5 },
};

/** What oa-model and an-model sell beyond tokens (fallback-model sells nothing extra). */
export const EXTRAS = { web_search: { per_call: 0.01 } };

/**
 * Providers `fake-openai` (OpenAI dialect) and `fake-anthropic` (Anthropic dialect) on the
 * fake upstream; models `oa-model` and `an-model` served by each, and `fallback-model` whose
 * first route is a closed port.
 */
export function testCatalogue({ upstream, extra }: CatalogueOptions) {
  return {
    providers: [
      { id: 'fake-openai', dialect: 'openai', base_url: `${upstream}/v1`, api_key: { env: 'FAKE_OPENAI_KEY' } },
      { id: 'fake-anthropic', dialect: 'anthropic', base_url: upstream, api_key: { env: 'FAKE_ANTHROPIC_KEY' } },
      { id: 'dead', dialect: 'openai', base_url: 'http://127.0.0.1:9/v1' },
      ...(extra?.providers ?? []),
    ],
    models: [
      {
        id: 'oa-model',
        owned_by: 'fake',
        context_window: 100000,
        max_output_tokens: 1000,
        ...PRICES,
        extras: EXTRAS,
        routes: [{ provider: 'fake-openai', model: 'upstream-oa' }],
      },
      {
        id: 'an-model',
        owned_by: 'fake',
        context_window: 100000,
        max_output_tokens: 1000,
        ...PRICES,
        extras: EXTRAS,
        routes: [{ provider: 'fake-anthropic', model: 'upstream-an' }],
      },
      {
        id: 'fallback-model',
        owned_by: 'fake',
        max_output_tokens: 1000,
        ...PRICES,
        routes: [
          { provider: 'dead', model: 'x' },
          { provider: 'fake-openai', model: 'upstream-oa' },
        ],
      },
      ...(extra?.models ?? []),
    ],
  };
}

/** A `responses`-dialect provider on the fake upstream and `rs-model` served by it, for testCatalogue's `extra`. */
export function responsesUpstream(upstream: string) {
  return {
    providers: [
      { id: 'fake-responses', dialect: 'responses', base_url: `${upstream}/v1`, api_key: { env: 'FAKE_OPENAI_KEY' } },
    ],
    models: [
      {
        id: 'rs-model',
        owned_by: 'fake',
        context_window: 100000,
        max_output_tokens: 1000,
        ...PRICES,
        routes: [{ provider: 'fake-responses', model: 'upstream-rs' }],
      },
    ],
  };
}

/** A `gemini`-dialect provider on the fake upstream and `gm-model` served by it, for testCatalogue's `extra`. */
export function geminiUpstream(upstream: string) {
  return {
    providers: [
      { id: 'fake-gemini', dialect: 'gemini', base_url: `${upstream}/v1beta`, api_key: { env: 'FAKE_GEMINI_KEY' } },
    ],
    models: [
      {
        id: 'gm-model',
        owned_by: 'fake',
        context_window: 100000,
        max_output_tokens: 1000,
        ...PRICES,
        routes: [{ provider: 'fake-gemini', model: 'upstream-gm' }],
      },
    ],
  };
}

process.env.FAKE_GEMINI_KEY ??= 'AIza-fake-gemini-provider-key-0003';
process.env.FAKE_OPENAI_KEY ??= 'sk-fake-openai-provider-key-0001';
process.env.FAKE_ANTHROPIC_KEY ??= 'sk-ant-fake-provider-key-0002';

export interface TestGateway extends RunningGateway {
  url: string;
  configPath: string;
  /** GET /metrics as the operator. */
  metrics(): Promise<string>;
  /** A verified user with this balance and one key. */
  user(balanceUsd?: string): Promise<{ userId: string; email: string; key: string; keyId: string }>;
}

export async function startTestGateway(
  t: Test,
  opts: {
    upstream: string;
    env?: Record<string, string>;
    catalogue?: unknown;
    embedded?: boolean;
    log?: Logger;
    clock?: Clock;
  },
): Promise<TestGateway> {
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-test-'));
  const configPath = path.join(dir, 'gateway.config.json');
  writeFileSync(configPath, JSON.stringify(opts.catalogue ?? testCatalogue({ upstream: opts.upstream })));
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    GATEWAY_CONFIG: configPath,
    ROUTE_COOLDOWN_MS: '0',
    USAGE_FLUSH_MS: '20',
    USAGE_FLUSH_MAX_MS: '20',
    DATA_DIR: path.join(dir, 'data'),
    METRICS_TOKEN,
    PASSWORD_HASH_COST: String(TEST_PASSWORD_HASH_COST),
    ...opts.env,
  };
  if (!opts.embedded) {
    env.DATABASE_URL ??= await testDatabase(t);
    // A cluster's gateway names its nodes instead (REDIS_CLUSTER_NODES), never both.
    if (!env.REDIS_CLUSTER_NODES) env.REDIS_URL ??= REDIS_URL;
    env.REDIS_PREFIX ??= testRedisPrefix(t);
  }
  const config = loadConfig(env);
  const log = opts.log ?? createLogger(config.LOG_LEVEL);
  const stores = await openStores(config);
  const running = await startGateway(config, log, stores, { clock: opts.clock }).catch(async (err: unknown) => {
    // A gateway that did not start leaves the stores to whoever opened them.
    await stores.close();
    throw err;
  });
  t.teardown(() => running.stop());
  return {
    ...running,
    url: `http://127.0.0.1:${running.port}`,
    configPath,
    metrics: async () => (await fetch(`http://127.0.0.1:${running.port}/metrics`, { headers: OPERATOR })).text(),
    async user(balanceUsd = '10') {
      const email = `${uniqueName('u')}@example.test`;
      const u = await createVerifiedUser(stores.sql, email, 'correct horse battery staple');
      const amount = usdToNano(balanceUsd);
      if (amount > 0n)
        await creditUser(stores.sql, stores.hot, u.id, amount, {
          method: 'operator',
          amount: nanoToUsd(amount),
          currency: 'USD',
        });
      const k = await createKey(stores.sql, u.id, 'test');
      return { userId: u.id, email, key: k.key, keyId: k.id };
    },
  };
}
