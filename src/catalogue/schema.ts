// The providers/models file of API.md §4. Validation errors name the JSON path
// (e.g. `models[3].pricing.input`) so an operator can find the mistake.

import * as v from 'valibot';

const Price = v.pipe(v.number('must be a number'), v.finite('must be finite'), v.minValue(0, 'must not be negative'), v.maxValue(1_000_000, 'is implausibly large'));

const Pricing = v.object({
  input: Price,
  output: Price,
  cache_read: v.optional(Price),
  cache_write: v.optional(Price),
});

const Secret = v.object({ env: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')) });

const Id = v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'must be 1-128 characters of letters, digits and ._:/-'));

export const ProviderSchema = v.object({
  id: Id,
  dialect: v.picklist(['openai', 'anthropic'], 'must be "openai" or "anthropic"'),
  base_url: v.pipe(v.string(), v.url('must be a URL')),
  api_key: v.optional(Secret),
  /** Extra headers sent to this provider (e.g. an org id). Values may be secrets. */
  headers: v.optional(v.record(v.string(), v.union([v.string(), Secret]))),
});

export const ModelSchema = v.object({
  id: Id,
  owned_by: v.optional(v.string(), 'airouter'),
  display_name: v.optional(v.string()),
  created: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  context_window: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 128_000),
  max_output_tokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 4096),
  pricing: Pricing,
  official_pricing: v.optional(Pricing),
  routes: v.pipe(
    v.array(v.object({ provider: Id, model: v.pipe(v.string(), v.nonEmpty('must not be empty')) })),
    v.minLength(1, 'must list at least one route'),
  ),
});

export const CatalogueFileSchema = v.object({
  providers: v.array(ProviderSchema),
  models: v.array(ModelSchema),
});

export type CatalogueFile = v.InferOutput<typeof CatalogueFileSchema>;
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
