// /api/admin/deposits: every deposit, by status, method and user; confirmed or failed by hand,
// with a reason. Confirming goes through the same state machine as the providers'
// notifications (src/payments/deposits.ts), so a deposit is credited once whoever comes first.

import { nanoToUsd } from '../billing/money.js';
import { conflict, notFound } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import { markPaid } from '../payments/deposits.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { recordAudit } from './audit.js';
import { query, uuidParam, type AdminCall } from './http.js';
import { DepositActionBody, DepositsAdminQuery, type AdminDepositT, type AdminDepositListT } from './shapes.js';

interface Row {
  id: string;
  user_id: string;
  email: string;
  method: string;
  provider: string | null;
  status: string;
  amount: string;
  currency: string;
  credit_nano: bigint;
  external_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  paid_at: Date | null;
  expires_at: Date | null;
  /** created_at to the microsecond: two deposits of one transaction share a millisecond. */
  cursor_at: string;
}

const SELECT = `d.id, d.user_id, u.email, d.method, d.provider, d.status, d.amount::text AS amount, d.currency, d.credit_nano,
  d.external_id, d.details, d.created_at, d.paid_at, d.expires_at,
  to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`;

const json = (d: Row): AdminDepositT => ({
  id: d.id,
  user_id: d.user_id,
  email: d.email,
  method: d.method,
  provider: d.provider,
  status: d.status as AdminDepositT['status'],
  amount: d.amount,
  currency: d.currency,
  credit_usd: nanoToUsd(d.credit_nano),
  reference: d.external_id,
  details: d.details,
  created_at: d.created_at.toISOString(),
  paid_at: d.paid_at?.toISOString() ?? null,
  expires_at: d.expires_at?.toISOString() ?? null,
});

export function depositAdminHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function list(ex: Exchange): Promise<Reply> {
    const q = query(ex, DepositsAdminQuery);
    const limit = Math.min(200, q.limit ? Number(q.limit) : 50);
    const [cursorAt, cursorId] = q.before ? q.before.split('_') : [null, null];
    const rows = await sql<Row[]>`
      SELECT ${sql.unsafe(SELECT)} FROM deposits d JOIN users u ON u.id = d.user_id
      -- The cursor goes in as text: a parameter typed timestamptz passes through the client's
      -- Date serializer, which keeps milliseconds only and made pages skip rows.
      WHERE (${q.status ?? null}::text IS NULL OR d.status = ${q.status ?? null}::text)
        AND (${q.method ?? null}::text IS NULL OR d.method = ${q.method ?? null}::text)
        AND (${q.user ?? null}::uuid IS NULL OR d.user_id = ${q.user ?? null}::uuid)
        AND (${cursorAt}::text IS NULL OR (d.created_at, d.id) < (${cursorAt}::text::timestamptz, ${cursorId}::uuid))
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit + 1}`;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const body: AdminDepositListT = {
      data: page.map(json),
      next_before: rows.length > limit && last ? `${last.cursor_at}_${last.id}` : null,
    };
    return { status: 200, body };
  }

  /** POST /deposits/{id}/confirm | /fail */
  async function act(ex: Exchange, call: AdminCall): Promise<Reply> {
    const [idText, action, ...extra] = call.rest;
    if (ex.method !== 'POST' || extra.length > 0 || (action !== 'confirm' && action !== 'fail'))
      throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    const id = uuidParam(idText, 'deposit');
    const { reason, reference } = await call.body(DepositActionBody);
    if (action === 'confirm') {
      const o = await markPaid(sql, gw.hot, id, {
        provider: null,
        reference: reference ?? null,
        by: `admin ${call.actor.label}`,
        details: { confirm_reason: reason },
        within: (tx, d, previous) =>
          recordAudit(tx, call.actor, {
            action: 'deposit.confirm',
            target: d.id,
            reason,
            before: { status: previous },
            after: { status: 'paid', credit_usd: nanoToUsd(d.credit_nano) },
          }),
      });
      if (o.kind === 'missing') throw notFound('No such deposit.');
      if (o.kind === 'unchanged') throw conflict('already_paid', 'This deposit is already paid; nothing was credited.');
      if (o.kind === 'refused') throw conflict('not_confirmed', `Not confirmed: ${o.reason}.`);
      return { status: 200, body: { ...(await one(id)), balance_usd: nanoToUsd(o.balance) } };
    }
    await sql.begin(async (tx) => {
      const [before] = await tx<{ status: string }[]>`SELECT status FROM deposits WHERE id = ${id} FOR UPDATE`;
      if (!before) throw notFound('No such deposit.');
      if (before.status !== 'pending' && before.status !== 'expired')
        throw conflict('not_open', `This deposit is ${before.status}; only a pending or expired one can be failed.`);
      await tx`UPDATE deposits SET status = 'failed', details = details || ${tx.json({ ended_by: `admin ${call.actor.label}`, fail_reason: reason } as never)} WHERE id = ${id}`;
      await recordAudit(tx, call.actor, {
        action: 'deposit.fail',
        target: id,
        reason,
        before: { status: before.status },
        after: { status: 'failed' },
      });
    });
    return { status: 200, body: await one(id) };
  }

  async function one(id: string): Promise<AdminDepositT> {
    const [d] = await sql<Row[]>`
      SELECT ${sql.unsafe(SELECT)} FROM deposits d JOIN users u ON u.id = d.user_id WHERE d.id = ${id}`;
    return json(d);
  }

  return { list, act };
}
