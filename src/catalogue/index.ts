// The live catalogue: models, their prices and their upstream routes. Compiled once per
// load so the request path only does map lookups; SIGHUP swaps in a new one atomically.

import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { EMBEDDING_DIALECT_NAMES, REASONING_MODEL_PATTERNS, type DialectName } from '../dialects/names.js';
import { CatalogueError } from './error.js';
import { EXAMPLE_CATALOGUE } from './example.js';
import { CatalogueFileSchema, issuePath, MODEL_KINDS, type ModelEntry, type ProviderEntry } from './schema.js';
import type { Prices } from './prices.js';

export type { Prices };

type Extras = NonNullable<ModelEntry['extras']>;

export interface PricingJson {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** The OpenAI-dialect field that carries the output cap (the catalogue's `max_tokens_field`). */
export type MaxTokensField = 'max_tokens' | 'max_completion_tokens' | 'both';

export interface Provider {
  id: string;
  dialect: DialectName;
  /** The field that carries the output cap, when the operator named one (see the catalogue schema); the dialect's rule otherwise. */
  maxTokensField?: MaxTokensField;
  /** base_url's host name, which a dialect's defaults may depend on. */
  host: string;
  /** Base for other endpoints of the same vendor (count_tokens). */
  baseUrl: string;
  apiKeyEnv?: string;
  headers: Record<string, string | { env: string }>;
}

export interface Route {
  provider: Provider;
  /** The model name the upstream knows. */
  model: string;
  /** provider/model, the unit of cool-down. */
  key: string;
  /**
   * The model reasons, so a translated request carries the client's reasoning level to it
   * (`reasoning_effort`, or an Anthropic thinking budget). Models that do not reason refuse
   * those fields, and clients such as Claude Code send them on every request.
   */
  reasoning: boolean;
  /** Share of the model's first tries (catalogue `weight`); 1 when the catalogue names none. */
  weight: number;
}

/**
 * Models known to take reasoning controls, when the catalogue does not say: each vendor's pattern
 * (its dialect's meta.ts: OpenAI's o-series and gpt-5, Claude 3.7 and 4+, Gemini 2.5 and 3+), at
 * the start of the upstream model name or after a `/` (aggregators' `vendor/model`). Any route's
 * model is matched against all of them: an aggregator speaking one dialect serves every vendor's.
 */
export const REASONING_MODEL = new RegExp(
  `(?:^|\\/)(?:${REASONING_MODEL_PATTERNS.map((p) => p.source).join('|')})`,
  'i',
);

export type ModelKind = (typeof MODEL_KINDS)[number];

export interface Model {
  id: string;
  /** `chat` models serve the chat surfaces, `embedding` ones POST /v1/embeddings; neither serves the other. */
  kind: ModelKind;
  /** Embedding models: the vectors' length, and the most `dimensions` a request may ask for (absent: not said). */
  dimensions?: number;
  ownedBy: string;
  displayName: string;
  created: number;
  contextWindow: number;
  maxOutputTokens: number;
  /** The most input tokens one image can be billed for. */
  maxImageTokens: number;
  pricing: Prices;
  officialPricing: Prices;
  pricingJson: PricingJson;
  officialPricingJson: PricingJson;
  /** OpenAI `service_tier` values sold at their own prices. */
  serviceTiers: Map<string, { pricing: Prices; officialPricing: Prices }>;
  /** Web search: held for this many searches when a request does not bound them. */
  webSearchMaxCalls: number;
  /** Token-priced server tools the operator accepts (see the catalogue schema). */
  serverTools: ReadonlySet<string>;
  /** Priced Anthropic betas (names or `prefix*`) this model's prices cover. */
  pricedBetas: readonly string[];
  maxN?: number;
  routes: Route[];
  /** Some route names a weight: the first route is drawn by weight (upstream/router.ts). */
  weighted: boolean;
}

export interface Catalogue {
  models: Map<string, Model>;
  list: Model[];
  source: string;
}

export { CatalogueError };

const nanoPerMillion = (usdPerMillion: number): bigint => BigInt(Math.round(usdPerMillion * 1e9));

function pricingJson(p: ModelEntry['pricing']): PricingJson {
  // Cached tokens cost what plain input costs unless the file says otherwise. An embedding
  // model's output price is left out (the schema sees that a chat model's is not): 0.
  return {
    input: p.input,
    output: p.output ?? 0,
    cache_read: p.cache_read ?? p.input,
    cache_write: p.cache_write ?? p.input,
  };
}

function prices(p: PricingJson, extras: Extras | undefined, withLongContext = true): Prices {
  const input = nanoPerMillion(p.input);
  const out: Prices = {
    input,
    output: nanoPerMillion(p.output),
    cacheRead: nanoPerMillion(p.cache_read),
    cacheWrite: nanoPerMillion(p.cache_write),
    cacheWrite1h: extras?.cache_write_1h !== undefined ? nanoPerMillion(extras.cache_write_1h) : 2n * input,
    // nanoPerMillion turns USD into nano-USD; a search is priced per call, not per million.
    perWebSearch: extras?.web_search ? nanoPerMillion(extras.web_search.per_call) : 0n,
  };
  if (extras?.audio) {
    out.audioIn = nanoPerMillion(extras.audio.input);
    out.audioOut = nanoPerMillion(extras.audio.output);
  }
  if (withLongContext && extras?.long_context) {
    out.longContext = {
      threshold: extras.long_context.threshold,
      prices: prices(pricingJson(extras.long_context.pricing), extras, false),
    };
  }
  return out;
}

/** A provider entry as the request path uses it. */
export function compileProvider(p: ProviderEntry): Provider {
  const base = p.base_url.replace(/\/+$/, '');
  return {
    id: p.id,
    dialect: p.dialect,
    maxTokensField: p.max_tokens_field,
    host: new URL(base).hostname,
    baseUrl: base,
    apiKeyEnv: p.api_key?.env,
    headers: p.headers ?? {},
  };
}

export function compileCatalogue(raw: unknown, source: string): Catalogue {
  const parsed = v.safeParse(CatalogueFileSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new CatalogueError(`${source}: ${issuePath(issue)} ${issue.message}`);
  }
  const file = parsed.output;
  const providers = new Map<string, Provider>();
  file.providers.forEach((p, i) => {
    if (providers.has(p.id)) throw new CatalogueError(`${source}: providers[${i}].id "${p.id}" is listed twice`);
    providers.set(p.id, compileProvider(p));
  });
  const models = new Map<string, Model>();
  file.models.forEach((m, i) => {
    if (models.has(m.id)) throw new CatalogueError(`${source}: models[${i}].id "${m.id}" is listed twice`);
    const routes = m.routes.map((r, j) => {
      const provider = providers.get(r.provider);
      if (!provider)
        throw new CatalogueError(
          `${source}: models[${i}].routes[${j}].provider "${r.provider}" is not a listed provider`,
        );
      if (m.kind === 'embedding' && !(EMBEDDING_DIALECT_NAMES as readonly string[]).includes(provider.dialect)) {
        const serving = EMBEDDING_DIALECT_NAMES.map((d) => `"${d}"`).join(' or ');
        throw new CatalogueError(
          `${source}: models[${i}].routes[${j}].provider "${r.provider}" speaks "${provider.dialect}", which has no embeddings endpoint; an embedding model needs a ${serving} provider`,
        );
      }
      return {
        provider,
        model: r.model,
        key: `${provider.id}/${r.model}`,
        reasoning: r.reasoning ?? REASONING_MODEL.test(r.model),
        weight: r.weight ?? 1,
      };
    });
    const pj = pricingJson(m.pricing);
    const oj = m.official_pricing ? pricingJson(m.official_pricing) : pj;
    const tiers = new Map<string, { pricing: Prices; officialPricing: Prices }>();
    for (const [tier, p] of Object.entries(m.extras?.service_tiers ?? {})) {
      tiers.set(tier, { pricing: prices(pricingJson(p), m.extras), officialPricing: prices(pricingJson(p), m.extras) });
    }
    models.set(m.id, {
      id: m.id,
      kind: m.kind,
      dimensions: m.dimensions,
      ownedBy: m.owned_by,
      displayName: m.display_name ?? m.id,
      created: m.created ?? 0,
      contextWindow: m.context_window,
      maxOutputTokens: m.max_output_tokens,
      maxImageTokens: m.max_image_tokens,
      pricing: prices(pj, m.extras),
      officialPricing: prices(oj, m.extras),
      pricingJson: pj,
      officialPricingJson: oj,
      serviceTiers: tiers,
      webSearchMaxCalls: m.extras?.web_search?.max_calls ?? 5,
      serverTools: new Set(m.extras?.server_tools ?? []),
      pricedBetas: m.extras?.priced_betas ?? [],
      maxN: m.max_n,
      routes,
      weighted: m.routes.some((r) => r.weight !== undefined),
    });
  });
  return { models, list: [...models.values()], source };
}

/** The catalogue file: GATEWAY_CONFIG, else ./gateway.config.json when present; undefined: the built-in example. */
export function catalogueFile(configPath: string | undefined, cwd = process.cwd()): string | undefined {
  if (configPath) return path.resolve(cwd, configPath);
  const file = path.resolve(cwd, 'gateway.config.json');
  return existsSync(file) ? file : undefined;
}

/** GATEWAY_CONFIG, else ./gateway.config.json when present, else the built-in example. */
export function loadCatalogue(configPath: string | undefined, cwd = process.cwd()): Catalogue {
  const file = catalogueFile(configPath, cwd);
  if (!file) return compileCatalogue(EXAMPLE_CATALOGUE, 'built-in example catalogue');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogueError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CatalogueError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return compileCatalogue(json, file);
}

/**
 * Holds the catalogue in force; a failed reload keeps the old one serving. A catalogue saved in
 * Postgres by an admin (./stored.ts) takes the file's place until none is saved.
 */
export class CatalogueHolder {
  current: Catalogue;
  private stored: Catalogue | undefined;
  constructor(readonly configPath: string | undefined) {
    this.current = loadCatalogue(configPath);
  }
  /** The catalogue saved in Postgres is in force from now on (every request reads `current`). */
  useStored(c: Catalogue): void {
    this.stored = c;
    this.current = c;
  }
  get fromStore(): boolean {
    return this.stored !== undefined;
  }
  reload(): { ok: true } | { ok: false; error: string } {
    try {
      // The file is checked even while a saved catalogue is in force, so that SIGHUP still
      // reports a broken file; it serves only when nothing is saved.
      const fromFile = loadCatalogue(this.configPath);
      this.current = this.stored ?? fromFile;
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }
}
