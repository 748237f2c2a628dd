// The providers/models file of API.md §4. Validation errors name the JSON path
// (e.g. `models[3].pricing.input`) so an operator can find the mistake.

import * as v from 'valibot';
import { DIALECT_NAMES } from '../dialects/names.js';

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`. */
const oneOf = (names: readonly string[]) => {
  const quoted = names.map((n) => `"${n}"`);
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
};

const Price = v.pipe(
  v.number('must be a number'),
  v.finite('must be finite'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(1_000_000, 'is implausibly large'),
);

const Pricing = v.object({
  input: Price,
  output: Price,
  cache_read: v.optional(Price),
  cache_write: v.optional(Price),
});

/**
 * A model's own prices: `output` may be left out, since an embedding model sells input only.
 * Whether it must be there depends on the model's `kind`, checked on the model (ModelSchema).
 */
const ModelPricing = v.object({ ...Pricing.entries, output: v.optional(Price) });

/** What a model is called for: chat surfaces, or POST /v1/embeddings. */
export const MODEL_KINDS = ['chat', 'embedding'] as const;

const Secret = v.object({
  env: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')),
});

/** What a provider or model id may be. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
const Id = v.pipe(
  v.string('must be a string'),
  v.regex(ID_PATTERN, 'must be 1-128 characters of letters, digits and ._:/-'),
);

export const MAX_TOKENS_FIELDS = ['max_tokens', 'max_completion_tokens', 'both'] as const;

export const ProviderSchema = v.object({
  id: Id,
  dialect: v.picklist(DIALECT_NAMES, `must be ${oneOf(DIALECT_NAMES)}`),
  base_url: v.pipe(v.string(), v.url('must be a URL')),
  api_key: v.optional(Secret),
  /** Extra headers sent to this provider (e.g. an org id). Values may be secrets. */
  headers: v.optional(v.record(v.string(), v.union([v.string(), Secret]))),
  /**
   * OpenAI dialect: which field carries the output cap the gateway reserved for, on forwarded
   * and translated requests alike. OpenAI's own API takes `max_completion_tokens` (and refuses
   * both at once); most compatible vendors honour only `max_tokens`; `both` sends the same value
   * in both fields, for vendors that accept that. Unset: the dialect's rule (openai/upstream.ts).
   */
  max_tokens_field: v.optional(v.picklist(MAX_TOKENS_FIELDS, `must be one of ${MAX_TOKENS_FIELDS.join(', ')}`)),
});

const Usd = v.pipe(
  v.number('must be a number'),
  v.finite('must be finite'),
  v.minValue(0, 'must not be negative'),
  v.maxValue(1_000, 'is implausibly large'),
);

/** Options that cost more than plain tokens. What a model does not list here is refused (400). */
const Extras = v.object({
  /** OpenAI `service_tier` values with their own prices (e.g. `priority`). */
  service_tiers: v.optional(v.record(v.pipe(v.string(), v.regex(/^[a-z_]{1,32}$/, 'must be a tier name')), Pricing)),
  /** Web search (OpenAI `web_search_options`, Anthropic's web_search server tool): USD per search. */
  web_search: v.optional(
    v.object({
      per_call: Usd,
      /** Searches held for per request when the request does not bound them (`max_uses`). */
      max_calls: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 5),
    }),
  ),
  /** USD per million tokens written to the cache with a one-hour lifetime. */
  cache_write_1h: v.optional(Price),
  /** Anthropic's long-context pricing: past `threshold` input tokens, every token at `pricing`. */
  long_context: v.optional(v.object({ threshold: v.pipe(v.number(), v.integer(), v.minValue(1)), pricing: Pricing })),
  /** USD per million audio tokens, in and out. */
  audio: v.optional(v.object({ input: Price, output: Price })),
  /**
   * Anthropic server-side tools and features billed by tokens only, that the operator accepts
   * for this model: `web_fetch`, `code_execution` (with `container`), `mcp` (`mcp_servers`),
   * `tool_search`. They run inside one request, so its input can outgrow the hold.
   */
  server_tools: v.optional(
    v.array(
      v.picklist(
        ['web_fetch', 'code_execution', 'mcp', 'tool_search'],
        'must be web_fetch, code_execution, mcp or tool_search',
      ),
    ),
  ),
  /**
   * Anthropic betas named in ANTHROPIC_PRICED_BETAS that this model's prices already cover (an
   * entry priced at fast-mode rates lists `fast-mode-*`): names, or prefixes ending in `*`.
   */
  priced_betas: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,100}\*?$/, 'must be a beta name or a prefix ending in *'))),
  ),
});

const ModelFields = v.object({
  id: Id,
  /** `chat` (the default) or `embedding`: an embedding model serves POST /v1/embeddings only, and only that route serves it. */
  kind: v.optional(v.picklist(MODEL_KINDS, `must be ${oneOf(MODEL_KINDS)}`), 'chat'),
  /** Embedding models: the length of the vectors the model returns, and the most `dimensions` a request may ask for. */
  dimensions: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be a whole number'),
      v.minValue(1, 'must be at least 1'),
      v.maxValue(65_536, 'is implausibly large'),
    ),
  ),
  owned_by: v.optional(v.string(), 'airouter'),
  display_name: v.optional(v.string()),
  created: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  context_window: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 128_000),
  max_output_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 4096),
  /** The most input tokens one image can be billed for on this model (the hold counts each image at this). */
  max_image_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 2500),
  pricing: ModelPricing,
  official_pricing: v.optional(ModelPricing),
  extras: v.optional(Extras),
  /** Most choices (`n`) one request may ask for; the gateway's MAX_N applies too. */
  max_n: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(128))),
  routes: v.pipe(
    v.array(
      v.object({
        provider: Id,
        model: v.pipe(v.string(), v.nonEmpty('must not be empty')),
        /** The upstream model takes reasoning controls (see REASONING_MODEL in catalogue/index.ts for the default). */
        reasoning: v.optional(v.boolean('must be true or false')),
        /**
         * Share of the model's first tries: with weights, the first route is drawn by them (0: a
         * fallback only) and the rest follow in order; without, routes are tried in order.
         */
        weight: v.optional(
          v.pipe(
            v.number('must be a number'),
            v.integer('must be a whole number'),
            v.minValue(0, 'must not be negative'),
            v.maxValue(1000, 'must be at most 1000'),
          ),
        ),
      }),
    ),
    v.minLength(1, 'must list at least one route'),
  ),
});

type ModelFieldsOut = v.InferOutput<typeof ModelFields>;

/**
 * A chat model sells output, so its prices name one; an embedding model produces no output
 * tokens, so an output price there can only be a mistake (left out, or 0 for a file written for
 * both). Checked per price list so that the message names the field.
 */
const outputPriceOk = (which: 'pricing' | 'official_pricing') => (m: ModelFieldsOut) => {
  const p = m[which];
  if (p === undefined) return true;
  return m.kind === 'embedding' ? !p.output : p.output !== undefined;
};
const OUTPUT_PRICE = (issue: v.CheckIssue<ModelFieldsOut>) =>
  issue.input.kind === 'embedding'
    ? 'must be left out (or 0) for an embedding model: it produces no output tokens'
    : 'is required for a chat model';

export const ModelSchema = v.pipe(
  ModelFields,
  v.forward(v.check(outputPriceOk('pricing'), OUTPUT_PRICE), ['pricing', 'output']),
  v.forward(v.check(outputPriceOk('official_pricing'), OUTPUT_PRICE), ['official_pricing', 'output']),
  v.forward(
    v.check((m) => m.kind === 'embedding' || m.dimensions === undefined, 'is for embedding models only'),
    ['dimensions'],
  ),
);

export const CatalogueFileSchema = v.object({
  providers: v.array(ProviderSchema),
  models: v.array(ModelSchema),
});

export type CatalogueFile = v.InferOutput<typeof CatalogueFileSchema>;
/** A catalogue as written: fields with defaults may be left out. */
export type CatalogueFileInput = v.InferInput<typeof CatalogueFileSchema>;
export type ProviderEntry = v.InferOutput<typeof ProviderSchema>;
export type ModelEntry = v.InferOutput<typeof ModelSchema>;

/** `models[3].pricing.input` from a valibot issue path. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out || '(root)';
}
