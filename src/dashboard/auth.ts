// Signup (register → mailed link → verify), login and logout.
//
// Nothing here tells a caller whether an email has an account: register answers the same 202
// either way, before looking (the mailbox owner learns the rest), and login runs the KDF even when there is no
// password to check, so an unknown email is not answered measurably faster.

import { createHash } from 'node:crypto';
import { hashSecret } from '../accounts/keys.js';
import { hashPassword, verifyPassword } from '../accounts/passwords.js';
import { findUserByEmail } from '../accounts/users.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { badRequest, conflict, tooManyAttempts, unauthorized } from './errors.js';
import { readJson, type Reply } from './http.js';
import { linkBase } from './links.js';
import { alreadyRegisteredMail, verificationMail, type Mailer } from './mail.js';
import { LoginBody, parseBody, RegisterBody, VerifyBody } from './schemas.js';
import { closeSession, openSession, randomToken, requireSession } from './sessions.js';
import type { VerificationSentT } from './shapes/account.js';

const EMAIL_TOKEN_TTL_S = 24 * 3600;

/** Rate-limit buckets name an email by a hash: no addresses sit in Redis key names. */
export const emailTag = (email: string) => createHash('sha256').update(email).digest('base64url').slice(0, 22);

let dummyHash: Promise<string> | undefined;
/** A real scrypt hash with the production parameters, to check against when there is none. */
const dummy = () => (dummyHash ??= hashPassword(randomToken()));

async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  try {
    if (!stored) {
      await verifyPassword(password, await dummy());
      return false;
    }
    return await verifyPassword(password, stored);
  } catch {
    // A malformed stored hash: treated as a wrong password, never as a crash.
    return false;
  }
}

/**
 * The client as the limits count it: an IPv4 address, or the /64 network of an IPv6 one (one
 * subscriber commonly holds a whole /64, and would otherwise have 2^64 addresses to rotate).
 */
export function clientOf(address: string): string {
  if (!address.includes(':') || address.includes('.')) return address;
  const [head, tail] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  const n = groups.map((g) => parseInt(g || '0', 16));
  // An IPv4 client on a dual-stack socket (::ffff:a.b.c.d written in hex) is that IPv4 address.
  if (n.slice(0, 5).every((x) => x === 0) && n[5] === 0xffff)
    return `${n[6] >> 8}.${n[6] & 255}.${n[7] >> 8}.${n[7] & 255}`;
  return `${n
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

/** How many times LOGIN_MAX_ATTEMPTS one email may fail from all addresses together. */
export const EMAIL_FACTOR = 10;

/**
 * Counts one event in each bucket in turn, and refuses at the first that went past its limit in
 * the window. Counting before the work (not after a failure) holds a burst of parallel guesses
 * to the limit too: a check first and a count after a failure would let every guess of a burst
 * pass the check before any of them was counted. Stopping at the first refusal keeps a flood
 * that is already refused by its address out of the wider buckets behind it.
 */
export async function limit(gw: Gateway, buckets: [name: string, max: number][], what: string): Promise<void> {
  for (const [name, max] of buckets) {
    const hit = await gw.hot.hit(name, gw.config.LOGIN_WINDOW_S);
    if (hit.count > max) throw tooManyAttempts(hit.ttlS, `Too many ${what}; try again in ${hit.ttlS} seconds.`);
  }
}

export function authHandlers(gw: Gateway, mailer: Mailer) {
  // Ready before the first login, so that one is not slower either.
  dummy().catch(() => {});

  /**
   * Everything /register does past validation and its rate limit, run after the answer went
   * out: an unknown email costs two inserts, a known one none, and the SMTP server's pace is
   * its own; none of that may show in how long the answer takes.
   */
  async function completeSignup(email: string, base: string): Promise<void> {
    await gw.sql`INSERT INTO users (email) VALUES (${email}) ON CONFLICT (email) DO NOTHING`;
    const [user] = await gw.sql<{ id: string; verified: boolean; has_password: boolean }[]>`
      SELECT id, email_verified_at IS NOT NULL AS verified, password_hash IS NOT NULL AS has_password
      FROM users WHERE email = ${email}`;
    if (user.verified && user.has_password) {
      // An existing account is left exactly as it is; its owner is only told someone tried.
      await mailer.send(alreadyRegisteredMail(email, `${base}/login`, `${base}/reset`));
      return;
    }
    // Unverified, or created by an operator without a password: the link lets the mailbox
    // owner choose one. Earlier links stay valid until used or expired.
    const token = randomToken();
    await gw.sql`
      INSERT INTO email_tokens (token_hash, user_id, expires_at)
      VALUES (${hashSecret(token)}, ${user.id}, now() + make_interval(secs => ${EMAIL_TOKEN_TTL_S}))`;
    await mailer.send(verificationMail(email, `${base}/verify?token=${token}`));
  }

  async function register(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { email } = parseBody(RegisterBody, await raw);
    // Each request may send a mail: bounded per client and per inbox, like logins.
    const max = gw.config.LOGIN_MAX_ATTEMPTS;
    await limit(
      gw,
      [
        [`register:a:${clientOf(ex.remoteAddress)}`, max],
        [`register:e:${emailTag(email)}`, max],
      ],
      'signup requests',
    );
    const base = linkBase(gw, ex);
    setImmediate(() => {
      completeSignup(email, base).catch((err: unknown) =>
        gw.log.error({ err, email: emailTag(email) }, 'signup after the answer failed'),
      );
    });
    const body: VerificationSentT = { status: 'verification_sent' };
    return { status: 202, body };
  }

  async function verify(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { token, password } = parseBody(VerifyBody, await raw);
    const tokenHash = hashSecret(token);
    const [found] = await gw.sql<{ used: boolean; expired: boolean }[]>`
      SELECT used_at IS NOT NULL AS used, expires_at <= now() AS expired FROM email_tokens WHERE token_hash = ${tokenHash}`;
    if (!found)
      throw badRequest('invalid_token', 'This verification link is not valid; sign up again to get a new one.');
    if (found.used)
      throw badRequest(
        'token_used',
        'This verification link has already been used; sign in, or sign up again for a new link.',
      );
    if (found.expired)
      throw badRequest('token_expired', 'This verification link has expired; sign up again to get a new one.');

    const passwordHash = await hashPassword(password);
    const session = await gw.sql.begin(async (tx) => {
      // The single-use check that counts: two requests racing with one token, one wins.
      const [claimed] = await tx<{ user_id: string }[]>`
        UPDATE email_tokens SET used_at = now()
        WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
        RETURNING user_id`;
      if (!claimed)
        throw badRequest(
          'token_used',
          'This verification link has already been used; sign in, or sign up again for a new link.',
        );
      // Any other outstanding link for this account dies with this one, so no older link
      // can later overwrite the password chosen now.
      await tx`UPDATE email_tokens SET used_at = now() WHERE user_id = ${claimed.user_id} AND used_at IS NULL`;
      const [updated] = await tx<{ id: string }[]>`
        UPDATE users SET password_hash = ${passwordHash}, email_verified_at = coalesce(email_verified_at, now())
        WHERE id = ${claimed.user_id} AND NOT (email_verified_at IS NOT NULL AND password_hash IS NOT NULL)
        RETURNING id`;
      if (!updated) throw conflict('already_verified', 'This account is already set up; sign in with its password.');
      return openSession(tx, updated.id, gw.config.SESSION_TTL_S);
    });
    return { status: 200, body: session };
  }

  async function login(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { email, password } = parseBody(LoginBody, await raw);
    // Per address, per address and email, and per email alone at a much higher threshold: a
    // flood from one address (or a few) cannot lock the owner out from their own.
    const max = gw.config.LOGIN_MAX_ATTEMPTS;
    const tag = emailTag(email);
    const client = clientOf(ex.remoteAddress);
    const addressBucket = `login:a:${client}`;
    const pairBucket = `login:ae:${client}:${tag}`;
    const emailBucket = `login:e:${tag}`;
    // Only failed attempts may count. Each attempt is counted before it is judged (see limit),
    // and one that turns out not to be a wrong password gives its count back: a success, or a
    // store failure that judged nothing. Otherwise the eleventh login of the day from one
    // address, or from one office behind one proxy, would wait for the window to end.
    await limit(
      gw,
      [
        [addressBucket, max],
        [pairBucket, max],
        [emailBucket, max * EMAIL_FACTOR],
      ],
      'sign-in attempts',
    );
    let wrong = false;
    try {
      const user = await findUserByEmail(gw.sql, email);
      // A disabled account (src/admin/accounts.ts) cannot sign in, whatever its password.
      const ok =
        (await passwordMatches(password, user?.password_hash ?? null)) &&
        !!user?.email_verified_at &&
        !user.disabled_at;
      if (!ok || !user) {
        wrong = true;
        throw unauthorized('invalid_credentials', 'Wrong email or password.');
      }
      const session = await openSession(gw.sql, user.id, gw.config.SESSION_TTL_S);
      // Knowing the password also clears the account's earlier failures, from this address and
      // from all; the address keeps its other failures, which may be guesses at other accounts.
      await Promise.all([gw.hot.resetHits(emailBucket), gw.hot.resetHits(pairBucket)]);
      return { status: 200, body: session };
    } finally {
      if (!wrong) {
        await Promise.all([
          gw.hot.releaseHit(addressBucket),
          gw.hot.releaseHit(pairBucket),
          gw.hot.releaseHit(emailBucket),
        ]).catch((err: unknown) =>
          gw.log.warn({ err, email: tag }, 'login: could not give back an attempt that did not fail'),
        );
      }
    }
  }

  async function logout(ex: Exchange): Promise<Reply> {
    const session = await requireSession(gw, ex);
    await closeSession(gw.sql, session);
    return { status: 204 };
  }

  return { register, verify, login, logout };
}
