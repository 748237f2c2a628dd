// The dashboard API's answers about service keys and their limits (their request bodies are
// validated by ../schemas.ts). No Node imports: the web app takes its types from here.

import * as v from 'valibot';
import { SPEND_PERIODS } from '../../billing/key-limits.js';
import { Id, Instant, NullableInstant } from '../../shape-pieces.js';

const KeyLimits = {
  rpm_limit: v.nullable(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Requests per minute allowed to this key; null: no limit'),
    ),
  ),
  spend_limit_usd: v.nullable(
    v.pipe(
      v.string(),
      v.regex(/^\d+\.\d{9}$/),
      v.description('Spend allowed to this key per spend_limit_period (USD, decimal string, 9 decimals); null: no cap'),
    ),
  ),
  spend_limit_period: v.nullable(
    v.pipe(
      v.picklist(SPEND_PERIODS),
      v.description('UTC day, ISO week, calendar month, or total (lifetime); null with no cap'),
    ),
  ),
};

export const Key = v.object({
  id: Id,
  name: v.string(),
  prefix: v.pipe(v.string(), v.description('The first characters of the key, to recognise it')),
  created_at: Instant('Creation time'),
  last_used_at: NullableInstant('Last request (updated as usage is recorded)'),
  revoked_at: NullableInstant('Revocation time'),
  ...KeyLimits,
});
export const KeyList = v.object({ data: v.array(Key) });
/** POST /keys: the only answer that carries the key itself. */
export const NewKey = v.object({
  id: Id,
  name: v.string(),
  key: v.pipe(v.string(), v.regex(/^ar-[0-9A-Za-z]{40}$/)),
  prefix: v.string(),
  created_at: Instant('Creation time'),
  ...KeyLimits,
});
export const RevokedKey = v.object({ id: Id, revoked_at: Instant('Revocation time') });

export type KeyT = v.InferOutput<typeof Key>;
export type KeyListT = v.InferOutput<typeof KeyList>;
export type NewKeyT = v.InferOutput<typeof NewKey>;
export type RevokedKeyT = v.InferOutput<typeof RevokedKey>;
