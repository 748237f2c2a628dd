// The dashboard's query string for the account's deposits (their answers are in
// ../shapes/money.ts).

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
} from './common.js';

export const DepositsQuery = v.pipe(
  v.object({
    ...RangeEntries,
    limit: v.optional(Limit, String(LIMITS.pageDefault)),
    cursor: v.optional(CursorParam('deposits')),
  }),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => ({ ...resolveRange(q), limit: q.limit, cursor: q.cursor as Cursor | undefined })),
);
