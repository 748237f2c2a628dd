// The admin API's providers, their saved keys and the test call (src/admin/providers.ts). No
// Node imports: the web client takes its types from here.

import * as v from 'valibot';
import { Instant, Text } from './common.js';

const ProviderId = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/, 'must be 1-64 characters of letters, digits and ._:/-'),
);
const EnvName = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name'),
);
const BaseUrl = v.pipe(
  v.string('must be a string'),
  v.maxLength(500, 'is too long'),
  v.regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL'),
);
const ProviderFields = {
  dialect: v.optional(Text(32)),
  base_url: v.optional(BaseUrl),
  max_tokens_field: v.optional(
    v.picklist(['max_tokens', 'max_completion_tokens', 'both'], 'must be max_tokens, max_completion_tokens or both'),
  ),
  /** The environment variable to take the key from when no key is saved in the console; null: none. */
  api_key_env: v.optional(v.nullable(EnvName)),
  enabled: v.optional(v.boolean('must be true or false')),
};
export const NewProviderBody = v.object(
  { id: ProviderId, ...ProviderFields, dialect: Text(32), base_url: BaseUrl },
  'must be a JSON object',
);
export const ProviderPatchBody = v.object(ProviderFields, 'must be a JSON object');
const KeyWeight = v.pipe(
  v.number('must be a number'),
  v.integer('must be a whole number'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(1000, 'must be at most 1000'),
);
export const NewProviderKeyBody = v.object(
  {
    key: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.minLength(8, 'is too short to be an API key'),
      v.maxLength(4096, 'is too long'),
      v.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
    ),
    label: v.optional(Text(100)),
    weight: v.optional(KeyWeight),
  },
  'must be a JSON object',
);
export const ProviderKeyPatchBody = v.object(
  {
    label: v.optional(Text(100)),
    weight: v.optional(KeyWeight),
    enabled: v.optional(v.boolean('must be true or false')),
  },
  'must be a JSON object',
);
export const ProviderTestBody = v.object({ model: v.optional(Text(200)) }, 'must be a JSON object');

export const ProviderKeyInfo = v.object({
  id: v.string(),
  label: v.string(),
  /** The last four characters: all that is shown of a key once saved. */
  hint: v.string(),
  weight: v.number(),
  enabled: v.boolean(),
  created_by: v.string(),
  created_at: Instant,
});
export const AdminProvider = v.object({
  id: v.string(),
  dialect: v.string(),
  base_url: v.string(),
  max_tokens_field: v.nullable(v.string()),
  enabled: v.boolean(),
  /** The environment variable of the catalogue entry, and whether this process has it set. */
  api_key_env: v.nullable(v.object({ name: v.string(), set: v.boolean() })),
  keys: v.array(ProviderKeyInfo),
  /** Saved keys this process cannot open (PROVIDER_KEY_SECRET unset or another one). */
  unopened_keys: v.number(),
  /** Where calls get their key now: `saved` keys, the `env` variable, `none` needed, or `missing` (every call fails). */
  key_source: v.picklist(['saved', 'env', 'none', 'missing']),
  /** Models with a route to this provider. */
  models: v.array(v.string()),
});
export const AdminProviderList = v.object({
  data: v.array(AdminProvider),
  dialects: v.array(v.string()),
  /** Whether keys can be saved here (PROVIDER_KEY_SECRET, or the embedded store's own secret). */
  can_save_keys: v.boolean(),
  catalogue_source: v.picklist(['postgres', 'file']),
});
export const ProviderTestAnswer = v.object({
  provider: v.string(),
  model: v.string(),
  results: v.array(
    v.object({
      key: v.string(),
      ok: v.boolean(),
      status: v.nullable(v.number()),
      latency_ms: v.number(),
      message: v.string(),
    }),
  ),
});
export type AdminProviderT = v.InferOutput<typeof AdminProvider>;
export type AdminProviderListT = v.InferOutput<typeof AdminProviderList>;
export type ProviderTestAnswerT = v.InferOutput<typeof ProviderTestAnswer>;
export type ProviderKeyInfoT = v.InferOutput<typeof ProviderKeyInfo>;
