// The dashboard API's answers about signup, sessions and passwords (their request bodies are
// validated by ../schemas.ts). No Node imports: the web app takes its types from here.

import * as v from 'valibot';
import { Id, Instant } from '../../shape-pieces.js';

export const Session = v.object({
  user_id: Id,
  token: v.pipe(v.string(), v.description('Session token, sent as "Authorization: Bearer <token>".')),
  expires_at: Instant('When the session ends'),
});
/** POST /register: the same whether or not the address has an account. */
export const VerificationSent = v.object({ status: v.literal('verification_sent') });
/** POST /password-reset: the same whether or not the address has an account. */
export const ResetSent = v.object({ status: v.literal('reset_sent') });

export type SessionT = v.InferOutput<typeof Session>;
export type VerificationSentT = v.InferOutput<typeof VerificationSent>;
export type ResetSentT = v.InferOutput<typeof ResetSent>;
