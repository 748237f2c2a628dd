// The admin API's catalogue: what is in force, a model's changes and a new model
// (src/admin/catalogue.ts). No Node imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Text } from './common.js';

const PerMillion = v.pipe(v.number('must be a number'), v.minValue(0, 'must not be negative'));
// `output` may be left out for an embedding model; the catalogue's own rules then say whether the model needs one.
const Pricing = v.object(
  {
    input: PerMillion,
    output: v.optional(PerMillion),
    cache_read: v.optional(PerMillion),
    cache_write: v.optional(PerMillion),
  },
  'must be prices in USD per million tokens',
);
/** A model's routes, in fallback order. */
const ModelPatchRoutes = v.pipe(
  v.array(
    v.object({
      provider: Text(64),
      model: Text(200),
      enabled: v.optional(v.boolean('must be true or false')),
      reasoning: v.optional(v.boolean('must be true or false')),
      upstream_pricing: v.optional(Pricing),
      /** Share of first tries (0: fallback only); without weights the routes are tried in order. */
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
);
/** One model's changes; a field left out stays as it is. `routes` replaces the list (its order is the fallback order). */
export const ModelPatchBody = v.object(
  {
    enabled: v.optional(v.boolean('must be true or false')),
    pricing: v.optional(Pricing),
    official_pricing: v.optional(Pricing),
    routes: v.optional(ModelPatchRoutes),
  },
  'must be a JSON object',
);

/** A new model: the catalogue file's model entry (its rules checked as the file's are), with its routes. */
export const NewModelBody = v.object(
  {
    id: Text(128),
    kind: v.optional(v.picklist(['chat', 'embedding'], 'must be chat or embedding')),
    display_name: v.optional(Text(200)),
    owned_by: v.optional(Text(100)),
    context_window: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1')),
    ),
    max_output_tokens: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1')),
    ),
    enabled: v.optional(v.boolean('must be true or false')),
    pricing: Pricing,
    official_pricing: v.optional(Pricing),
    routes: ModelPatchRoutes,
  },
  'must be a JSON object',
);

export const CatalogueState = v.object({
  version: v.nullable(v.string()),
  source: v.picklist(['postgres', 'file']),
  saved_by: v.nullable(v.string()),
  saved_at: v.nullable(Instant),
  /**
   * The catalogue file (GATEWAY_CONFIG, ./gateway.config.json, else none: the built-in example).
   * `differs`: a saved version is in force and the file says something else, which is not served
   * until it is loaded (POST /catalogue/load-file).
   */
  file: v.object({
    path: v.nullable(v.string()),
    readable: v.boolean(),
    differs: v.boolean(),
    error: v.nullable(v.string()),
  }),
  /** What serves now: the models in service and their routes in order (provider/model). */
  in_service: v.array(v.object({ id: v.string(), routes: v.array(v.string()) })),
  /** The catalogue file's JSON, switched-off entries and upstream prices included. */
  document: v.unknown(),
});
export type CatalogueStateT = v.InferOutput<typeof CatalogueState>;
