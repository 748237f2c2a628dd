// The admin API's audit log (GET /audit, served by src/admin/users.ts). No Node imports: the
// web client takes its types from here.

import * as v from 'valibot';
import { Instant, Limit, Text } from './common.js';

export const AuditQuery = v.object({
  limit: v.optional(Limit),
  /** The id of the last entry of the previous page. */
  before: v.optional(v.pipe(v.string(), v.maxLength(19), v.regex(/^\d+$/, 'must be an entry id'))),
  action: v.optional(Text(64)),
});

export const AuditEntry = v.object({
  id: v.string(),
  actor: v.string(),
  actor_id: v.nullable(v.string()),
  action: v.string(),
  target: v.nullable(v.string()),
  reason: v.nullable(v.string()),
  before: v.unknown(),
  after: v.unknown(),
  created_at: Instant,
});
export const AuditList = v.object({ data: v.array(AuditEntry), next_before: v.nullable(v.string()) });

export type AuditEntryT = v.InferOutput<typeof AuditEntry>;
export type AuditListT = v.InferOutput<typeof AuditList>;
