// The dashboard's query strings for usage: the totals, the log and its export (their answers
// are in ../shapes/usage.ts).

import * as v from 'valibot';
import type { Cursor } from '../cursor.js';
import {
  CursorParam,
  DISORDERED,
  LIMITS,
  Limit,
  MIXED,
  notMixed,
  ordered,
  RangeEntries,
  resolveRange,
  type RangeInput,
} from './common.js';
import { rule } from './parse.js';

export const StatsQuery = v.pipe(
  v.object(RangeEntries),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => resolveRange(q)),
);

/**
 * `ok` (2xx), `error` (anything else: refused, failed, cut short), `refused` (refused or failed
 * before any answer, at $0: the refusal log) or one status code.
 */
const StatusFilter = v.pipe(
  v.string(),
  v.regex(
    /^(ok|error|refused|[1-5]\d\d)$/,
    rule('not_allowed', 'must be ok, error, refused or a status code such as 429', {
      allowed: ['ok', 'error', 'refused', '100–599'],
    }),
  ),
  v.transform((s): UsageStatus => (s === 'ok' || s === 'error' || s === 'refused' ? s : Number(s))),
);
export type UsageStatus = 'ok' | 'error' | 'refused' | number;

const UsageFilterEntries = {
  ...RangeEntries,
  model: v.optional(
    v.pipe(
      v.string(),
      v.nonEmpty('must not be empty'),
      v.maxLength(LIMITS.model, `must be at most ${LIMITS.model} characters`),
    ),
  ),
  key_id: v.optional(v.pipe(v.string(), v.maxLength(36, 'must be a key id'), v.uuid('must be a key id'))),
  status: v.optional(StatusFilter),
};
type UsageFilterInput = RangeInput & { model?: string; key_id?: string; status?: UsageStatus };
const usageFilter = (q: UsageFilterInput) => ({
  ...resolveRange(q),
  model: q.model,
  keyId: q.key_id?.toLowerCase(),
  status: q.status,
});
export type UsageFilter = ReturnType<typeof usageFilter>;

export const UsageQuery = v.pipe(
  v.object({
    ...UsageFilterEntries,
    limit: v.optional(Limit, String(LIMITS.pageDefault)),
    cursor: v.optional(CursorParam('usage')),
  }),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => ({ ...usageFilter(q), limit: q.limit, cursor: q.cursor as Cursor | undefined })),
);

export const UsageExportQuery = v.pipe(
  v.object(UsageFilterEntries),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => usageFilter(q)),
);
