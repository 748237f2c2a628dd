// What every provider's notification handler shares: the result it reports, and the two moves
// it may ask of the state machine, each logged with its reason.

import { safeParse, type BaseIssue, type GenericSchema, type InferOutput } from 'valibot';
import type { Logger } from 'pino';
import { nanoToUsd } from '../billing/money.js';
import type { HotStore } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { findDeposit, markEnded, markPaid, type DepositRow, type DepositStatus, type Provider } from './deposits.js';
import { jsonObject } from './http.js';

export interface NotifyContext {
  sql: Sql;
  hot: HotStore;
  log: Logger;
}

/**
 * ok: handled (or nothing left to do): the provider gets its acknowledgement. Not ok: refused
 * with an HTTP status and the reason logged; the provider may send it again.
 */
export type NotifyResult =
  | { ok: true; depositId: string; status: DepositStatus; note: string }
  | { ok: false; httpStatus: number; reason: string; depositId?: string };

/** Reasons quote what was sent (field names, ids): bounded, so a sender cannot flood the log. */
export const refuse = (httpStatus: number, reason: string, depositId?: string): NotifyResult => ({
  ok: false,
  httpStatus,
  reason: reason.length > 300 ? `${reason.slice(0, 300)}…` : reason,
  depositId,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A deposit id in the canonical or the dashless (32 hex, epusdt's order_id) form, or null. */
export function asDepositId(text: string): string | null {
  const t = text.toLowerCase();
  if (UUID.test(t)) return t;
  if (/^[0-9a-f]{32}$/.test(t))
    return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`;
  return null;
}

export const fieldOf = (issue: BaseIssue<unknown>): string =>
  (issue.path ?? []).map((p) => String((p as { key: unknown }).key)).join('.') || '(body)';

/** A body that failed its schema: an unknown field is named as such. */
const malformed = (issue: BaseIssue<unknown>): NotifyResult =>
  refuse(
    400,
    issue.type === 'strict_object' && issue.input !== undefined
      ? `unexpected field ${fieldOf(issue)}`
      : `field ${fieldOf(issue)} is missing or malformed`,
  );

/** The raw body as the provider's schema says, or the refusal to answer. */
export function parseNotification<S extends GenericSchema>(
  schema: S,
  raw: Buffer,
): { ok: true; n: InferOutput<S> } | { ok: false; refusal: NotifyResult } {
  const body = jsonObject(raw);
  if (!body) return { ok: false, refusal: refuse(400, 'the body is not a JSON object') };
  const parsed = safeParse(schema, body);
  return parsed.success ? { ok: true, n: parsed.output } : { ok: false, refusal: malformed(parsed.issues[0]) };
}

/** The deposit an order id names, if it is one of `provider`'s. */
export async function depositOf(
  ctx: NotifyContext,
  provider: Provider,
  orderId: string,
): Promise<DepositRow | undefined> {
  const id = asDepositId(orderId);
  const d = id ? await findDeposit(ctx.sql, id) : undefined;
  return d?.provider === provider ? d : undefined;
}

/** The provider says the money arrived: credit the stored credit, once. */
export async function applyPaid(
  ctx: NotifyContext,
  d: DepositRow,
  provider: Provider,
  reference: string | null,
  by: string,
  details: Record<string, unknown> = {},
): Promise<NotifyResult> {
  const o = await markPaid(ctx.sql, ctx.hot, d.id, { provider, reference, by, details });
  if (o.kind === 'missing') return refuse(404, 'the deposit is gone', d.id);
  if (o.kind === 'refused') return refuse(409, o.reason, d.id);
  if (o.kind === 'unchanged')
    return { ok: true, depositId: d.id, status: o.deposit.status, note: `${by}: ${o.reason}` };
  const fields = {
    deposit_id: d.id,
    user_id: d.user_id,
    provider,
    reference,
    amount: d.amount,
    currency: d.currency,
    credit_usd: nanoToUsd(o.deposit.credit_nano),
  };
  if (o.previous === 'expired')
    ctx.log.warn(fields, `deposit paid after it had expired (${by}); the money arrived, so it is credited`);
  else ctx.log.info(fields, `deposit paid (${by})`);
  return { ok: true, depositId: d.id, status: 'paid', note: `${by}: credited` };
}

/** The provider ended the order unpaid. After 'paid' (or any end) this changes nothing. */
export async function applyEnded(
  ctx: NotifyContext,
  d: DepositRow,
  to: 'expired' | 'failed',
  by: string,
): Promise<NotifyResult> {
  const row = await markEnded(ctx.sql, d.id, to, by);
  if (row) {
    ctx.log.info({ deposit_id: d.id, user_id: d.user_id, status: to }, `deposit ${to} (${by})`);
    return { ok: true, depositId: d.id, status: to, note: `${by}: ${to}` };
  }
  const now = await ctx.sql<{ status: DepositStatus }[]>`SELECT status FROM deposits WHERE id = ${d.id}`;
  const status = now[0]?.status ?? d.status;
  ctx.log.info({ deposit_id: d.id, status }, `deposit notification ignored: ${by} for a deposit already ${status}`);
  return { ok: true, depositId: d.id, status, note: `${by}: ignored, the deposit is ${status}` };
}
