// Dashboard sessions: an opaque random token for the client, only its SHA-256 in Postgres.
// Every dashboard call looks the session up; the dashboard is not a hot path, and a logout or
// expiry takes effect at once without any cache to invalidate.

import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { hashSecret } from '../accounts/keys.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { bearer } from '../wire.js';
import type { Sql } from '../store/sql.js';
import { unauthorized } from './errors.js';
import type { SessionT } from './shapes/account.js';

const SESSION_PREFIX = 'ars_';
const TOKEN_BYTES = 32;

/** The pool or a transaction on it. */
export type Queryable = Sql | postgres.TransactionSql<{ bigint: bigint }>;

export interface Session {
  userId: string;
  tokenHash: string;
}

/** 32 CSPRNG bytes, base64url: what verification links and sessions are made of. */
export const randomToken = (): string => randomBytes(TOKEN_BYTES).toString('base64url');

export async function openSession(sql: Queryable, userId: string, ttlS: number): Promise<SessionT> {
  const token = SESSION_PREFIX + randomToken();
  // Sweeping this user's dead sessions here keeps the table from growing without a job.
  await sql`DELETE FROM sessions WHERE user_id = ${userId} AND expires_at <= now()`;
  const [row] = await sql<{ expires_at: Date }[]>`
    INSERT INTO sessions (token_hash, user_id, expires_at)
    VALUES (${hashSecret(token)}, ${userId}, now() + make_interval(secs => ${ttlS}))
    RETURNING expires_at`;
  return { user_id: userId, token, expires_at: row.expires_at.toISOString() };
}

export async function requireSession(gw: Gateway, ex: Exchange): Promise<Session> {
  const token = bearer(ex.headers.authorization);
  if (!token)
    throw unauthorized('unauthorized', 'Sign in first: send the session token as "Authorization: Bearer <token>".');
  if (!token.startsWith(SESSION_PREFIX) || token.length > 128)
    throw unauthorized('invalid_session', 'The session token is invalid or has expired; sign in again.');
  const tokenHash = hashSecret(token);
  const [row] = await gw.sql<{ user_id: string }[]>`
    SELECT user_id FROM sessions WHERE token_hash = ${tokenHash} AND expires_at > now()`;
  if (!row) throw unauthorized('invalid_session', 'The session token is invalid or has expired; sign in again.');
  return { userId: row.user_id, tokenHash };
}

export async function closeSession(sql: Sql, session: Session): Promise<void> {
  await sql`DELETE FROM sessions WHERE token_hash = ${session.tokenHash}`;
}
