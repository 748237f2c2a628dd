// Redemption codes: an admin makes N codes of an amount with an expiry (shown once), a user
// redeems one (POST /api/dashboard/redeem). A code credits exactly once however many redeem it
// at the same moment: the conditional UPDATE that marks it redeemed lets one transaction through,
// and the credit is a deposit whose (method, external_id) is unique.

import { createHash, randomBytes } from 'node:crypto';
import { creditBalance } from '../accounts/users.js';
import { nanoToUsd, usdToNano } from '../billing/money.js';
import { badRequest, conflict, DashboardError, tooManyAttempts } from '../dashboard/errors.js';
import { readJson, type Reply } from '../dashboard/http.js';
import { parseBody } from '../dashboard/schemas.js';
import { requireSession } from '../dashboard/sessions.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import type { Sql } from '../store/sql.js';
import { recordAudit, type Actor } from './audit.js';
import { query, type AdminCall } from './http.js';
import { CodesQuery, NewCodesBody, RedeemBody, type CodeListT, type NewCodesT, type RedeemAnswerT } from './shapes.js';

/** Crockford's base32: no I, L, O or U to misread when a code is typed from paper. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_CHARS = 20; // 100 bits

/** What a user types, made canonical: case, spaces and dashes do not matter. */
export const canonicalCode = (text: string) => text.toUpperCase().replace(/[\s-]/g, '');
const hashCode = (canonical: string) => createHash('sha256').update(canonical).digest('hex');

function newCode(): string {
  const bytes = randomBytes(CODE_CHARS);
  let s = '';
  for (const b of bytes) s += ALPHABET[b & 31];
  return `${s.slice(0, 5)}-${s.slice(5, 10)}-${s.slice(10, 15)}-${s.slice(15)}`;
}

export async function createCodes(
  sql: Sql,
  actor: Actor,
  o: { count: number; creditNano: bigint; expiresAt: Date; note: string },
): Promise<{ batchId: string; codes: string[] }> {
  const codes = Array.from({ length: o.count }, newCode);
  const batchId = await sql.begin(async (tx) => {
    const [{ id }] = await tx<{ id: string }[]>`SELECT gen_random_uuid() AS id`;
    const rows = codes.map((c) => ({
      batch_id: id,
      code_hash: hashCode(canonicalCode(c)),
      prefix: c.slice(0, 5),
      credit_nano: o.creditNano.toString(),
      expires_at: o.expiresAt,
      note: o.note,
      created_by: actor.label,
    }));
    await tx`INSERT INTO redemption_codes ${tx(rows)}`;
    await recordAudit(tx, actor, {
      action: 'codes.create',
      target: id,
      reason: o.note || null,
      after: { count: o.count, amount_usd: nanoToUsd(o.creditNano), expires_at: o.expiresAt.toISOString() },
    });
    return id;
  });
  return { batchId: batchId as string, codes };
}

export type RedeemOutcome = { ok: true; creditNano: bigint; balance: bigint } | { ok: false; error: DashboardError };

export async function redeemCode(
  sql: Sql,
  gw: Pick<Gateway, 'hot'>,
  userId: string,
  code: string,
): Promise<RedeemOutcome> {
  const hash = hashCode(canonicalCode(code));
  const done = await creditBalance(sql, gw.hot, async (tx) => {
    const [c] = await tx<{ id: string; credit_nano: bigint }[]>`
      UPDATE redemption_codes SET redeemed_by = ${userId}, redeemed_at = now()
      WHERE code_hash = ${hash} AND redeemed_at IS NULL AND expires_at > now()
      RETURNING id, credit_nano`;
    if (!c) return null;
    const [d] = await tx<{ id: string }[]>`
      INSERT INTO deposits (user_id, method, status, amount, currency, credit_nano, external_id, paid_at)
      VALUES (${userId}, 'code', 'paid', ${nanoToUsd(c.credit_nano)}, 'USD', ${c.credit_nano.toString()}, ${c.id}, now())
      RETURNING id`;
    await tx`UPDATE redemption_codes SET deposit_id = ${d.id} WHERE id = ${c.id}`;
    return { userId, creditNano: c.credit_nano, result: null };
  });
  if (done) return { ok: true, creditNano: done.creditNano, balance: done.balance };
  // Why not: read after the fact, only to word the refusal.
  const [c] = await sql<{ redeemed: boolean; expired: boolean }[]>`
    SELECT redeemed_at IS NOT NULL AS redeemed, expires_at <= now() AS expired FROM redemption_codes WHERE code_hash = ${hash}`;
  if (!c) return { ok: false, error: badRequest('invalid_code', 'This code is not valid; check it and try again.') };
  if (c.redeemed) return { ok: false, error: conflict('code_used', 'This code has already been redeemed.') };
  return { ok: false, error: badRequest('code_expired', 'This code has expired.') };
}

export function codeHandlers(gw: Gateway) {
  /** POST /api/dashboard/redeem: failures count against the user like failed sign-ins. */
  async function redeem(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const { code } = parseBody(RedeemBody, await raw);
    const bucket = `redeem:${userId}`;
    const hit = await gw.hot.hit(bucket, gw.config.LOGIN_WINDOW_S);
    if (hit.count > gw.config.LOGIN_MAX_ATTEMPTS)
      throw tooManyAttempts(hit.ttlS, `Too many failed codes; try again in ${hit.ttlS} seconds.`);
    const r = await redeemCode(gw.sql, gw, userId, code);
    if (!r.ok) throw r.error;
    await gw.hot.releaseHit(bucket).catch(() => {});
    const body: RedeemAnswerT = { credited_usd: nanoToUsd(r.creditNano), balance_usd: nanoToUsd(r.balance) };
    return { status: 200, body };
  }

  /** POST /api/admin/codes */
  async function create(_ex: Exchange, call: AdminCall): Promise<Reply> {
    const b = await call.body(NewCodesBody);
    const creditNano = usdToNano(b.amount_usd);
    if (creditNano === 0n) throw badRequest('invalid_request', '"amount_usd" must be more than 0.');
    const expiresAt = new Date(b.expires_at);
    if (!(expiresAt.getTime() > Date.now()))
      throw badRequest('invalid_request', '"expires_at" must be an instant in the future.');
    const { batchId, codes } = await createCodes(gw.sql, call.actor, {
      count: b.count,
      creditNano,
      expiresAt,
      note: b.note ?? '',
    });
    const body: NewCodesT = {
      batch_id: batchId,
      amount_usd: nanoToUsd(creditNano),
      expires_at: expiresAt.toISOString(),
      codes,
    };
    return { status: 201, body };
  }

  /** GET /api/admin/codes */
  async function list(ex: Exchange): Promise<Reply> {
    const q = query(ex, CodesQuery);
    const limit = Math.min(500, q.limit ? Number(q.limit) : 100);
    const rows = await gw.sql<
      {
        id: string;
        batch_id: string;
        prefix: string;
        credit_nano: bigint;
        expires_at: Date;
        note: string;
        created_by: string;
        created_at: Date;
        redeemed_at: Date | null;
        redeemed_by_email: string | null;
        expired: boolean;
      }[]
    >`
      SELECT c.id, c.batch_id, c.prefix, c.credit_nano, c.expires_at, c.note, c.created_by, c.created_at, c.redeemed_at,
             u.email AS redeemed_by_email, c.expires_at <= now() AS expired
      FROM redemption_codes c LEFT JOIN users u ON u.id = c.redeemed_by
      WHERE (${q.batch ?? null}::uuid IS NULL OR c.batch_id = ${q.batch ?? null}::uuid)
        AND (${q.status ?? null}::text IS NULL
             OR (${q.status ?? null}::text = 'redeemed' AND c.redeemed_at IS NOT NULL)
             OR (${q.status ?? null}::text = 'expired' AND c.redeemed_at IS NULL AND c.expires_at <= now())
             OR (${q.status ?? null}::text = 'open' AND c.redeemed_at IS NULL AND c.expires_at > now()))
      ORDER BY c.created_at DESC, c.id LIMIT ${limit}`;
    const body: CodeListT = {
      data: rows.map((r) => ({
        id: r.id,
        batch_id: r.batch_id,
        prefix: r.prefix,
        amount_usd: nanoToUsd(r.credit_nano),
        expires_at: r.expires_at.toISOString(),
        note: r.note,
        created_by: r.created_by,
        created_at: r.created_at.toISOString(),
        status: r.redeemed_at ? 'redeemed' : r.expired ? 'expired' : 'open',
        redeemed_at: r.redeemed_at?.toISOString() ?? null,
        redeemed_by: r.redeemed_by_email,
      })),
    };
    return { status: 200, body };
  }

  return { redeem, create, list };
}
