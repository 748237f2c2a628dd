// Changing a password, resetting a forgotten one by a mailed link, and signing out everywhere.
//
// A reset link is an email token like the signup's, stored under a hash of "reset:" and the
// token, so neither kind of link opens the other's door. Asking for one answers the same for
// known and unknown emails, before looking (as /register does); only an account that is set up
// gets a mail. A new password, by either route, signs out every other session of the account.

import { hashSecret } from '../accounts/keys.js';
import { hashPassword, verifyPassword } from '../accounts/passwords.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { clientOf, emailTag, limit } from './auth.js';
import { badRequest, DashboardError } from './errors.js';
import { readJson, type Reply } from './http.js';
import { linkBase } from './links.js';
import { resetMail, type Mailer } from './mail.js';
import { ChangePasswordBody, parseBody, ResetConfirmBody, ResetRequestBody } from './schemas.js';
import { openSession, randomToken, requireSession } from './sessions.js';
import type { ResetSentT } from './shapes/account.js';

/** Short: a reset link in a mailbox is a key to the account. */
export const RESET_TTL_S = 3600;
const resetHash = (token: string) => hashSecret(`reset:${token}`);

export function passwordHandlers(gw: Gateway, mailer: Mailer) {
  async function change(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const session = await requireSession(gw, ex);
    const { current_password: current, new_password: next } = parseBody(ChangePasswordBody, await raw);
    // A session left open on a shared computer must not become a way to guess the password.
    const bucket = `password:u:${session.userId}`;
    await limit(gw, [[bucket, gw.config.LOGIN_MAX_ATTEMPTS]], 'password attempts');
    const [user] = await gw.sql<
      { password_hash: string | null }[]
    >`SELECT password_hash FROM users WHERE id = ${session.userId}`;
    const ok = !!user?.password_hash && (await verifyPassword(current, user.password_hash).catch(() => false));
    if (!ok)
      throw new DashboardError(400, 'wrong_password', 'The current password is not right.', undefined, {
        param: 'current_password',
      });
    await gw.hot.releaseHit(bucket).catch(() => {});
    const hash = await hashPassword(next);
    await gw.sql.begin(async (tx) => {
      await tx`UPDATE users SET password_hash = ${hash} WHERE id = ${session.userId}`;
      // Whoever else holds a session (a device left signed in, someone who knew the old
      // password) is signed out; the one that changed it stays.
      await tx`DELETE FROM sessions WHERE user_id = ${session.userId} AND token_hash <> ${session.tokenHash}`;
      await tx`UPDATE email_tokens SET used_at = now() WHERE user_id = ${session.userId} AND used_at IS NULL`;
    });
    return { status: 204 };
  }

  async function logoutAll(ex: Exchange): Promise<Reply> {
    const session = await requireSession(gw, ex);
    await gw.sql`DELETE FROM sessions WHERE user_id = ${session.userId}`;
    return { status: 204 };
  }

  async function mailReset(email: string, base: string): Promise<void> {
    const [user] = await gw.sql<{ id: string }[]>`
      SELECT id FROM users WHERE email = ${email} AND email_verified_at IS NOT NULL AND password_hash IS NOT NULL`;
    if (!user) return;
    const token = randomToken();
    await gw.sql`
      INSERT INTO email_tokens (token_hash, user_id, expires_at)
      VALUES (${resetHash(token)}, ${user.id}, now() + make_interval(secs => ${RESET_TTL_S}))`;
    await mailer.send(resetMail(email, `${base}/reset?token=${token}`, RESET_TTL_S / 60));
  }

  async function requestReset(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { email } = parseBody(ResetRequestBody, await raw);
    const max = gw.config.LOGIN_MAX_ATTEMPTS;
    await limit(
      gw,
      [
        [`reset:a:${clientOf(ex.remoteAddress)}`, max],
        [`reset:e:${emailTag(email)}`, max],
      ],
      'reset requests',
    );
    const base = linkBase(gw, ex);
    setImmediate(() => {
      mailReset(email, base).catch((err: unknown) =>
        gw.log.error({ err, email: emailTag(email) }, 'password reset after the answer failed'),
      );
    });
    const body: ResetSentT = { status: 'reset_sent' };
    return { status: 202, body };
  }

  async function confirmReset(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { token, password } = parseBody(ResetConfirmBody, await raw);
    const tokenHash = resetHash(token);
    const [found] = await gw.sql<{ used: boolean; expired: boolean }[]>`
      SELECT used_at IS NOT NULL AS used, expires_at <= now() AS expired FROM email_tokens WHERE token_hash = ${tokenHash}`;
    if (!found) throw badRequest('invalid_token', 'This reset link is not valid; ask for a new one.');
    if (found.used) throw badRequest('token_used', 'This reset link has already been used; ask for a new one.');
    if (found.expired) throw badRequest('token_expired', 'This reset link has expired; ask for a new one.');
    const hash = await hashPassword(password);
    const session = await gw.sql.begin(async (tx) => {
      const [claimed] = await tx<{ user_id: string }[]>`
        UPDATE email_tokens SET used_at = now()
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
        RETURNING user_id`;
      if (!claimed) throw badRequest('token_used', 'This reset link has already been used; ask for a new one.');
      await tx`UPDATE email_tokens SET used_at = now() WHERE user_id = ${claimed.user_id} AND used_at IS NULL`;
      await tx`UPDATE users SET password_hash = ${hash}, email_verified_at = coalesce(email_verified_at, now()) WHERE id = ${claimed.user_id}`;
      await tx`DELETE FROM sessions WHERE user_id = ${claimed.user_id}`;
      return openSession(tx, claimed.user_id, gw.config.SESSION_TTL_S);
    });
    return { status: 200, body: session };
  }

  return { change, logoutAll, requestReset, confirmReset };
}
