// What the caller can buy and what they have: the catalogue with its discounts, the balance,
// and the deposits that made it.

import { nanoToUsd } from '../billing/money.js';
import type { Catalogue, Model } from '../catalogue/index.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import { CURSOR_AT_SQL, encodeCursor } from './cursor.js';
import type { Reply } from './http.js';
import { DepositsQuery, parseQuery } from './schemas.js';
import { sweepExpired, type DepositStatus } from '../payments/deposits.js';
import { requireSession } from './sessions.js';
import type { BalanceT, CatalogT, DepositPageT } from './shapes/money.js';
import { and, rangeConditions, type Fragment } from './usage.js';

/**
 * The discount on input tokens, the price most requests are dominated by:
 * round((1 − input / official input) × 100), 0 when there is no official price to compare
 * with. Negative when the gateway charges more than the vendor.
 */
export function discountPct(m: Model): number {
  const official = m.officialPricing.input;
  if (official <= 0n) return 0;
  return Math.round((1 - Number(m.pricing.input) / Number(official)) * 100);
}

const catalogJson = new WeakMap<Catalogue, CatalogT>();

function catalog(c: Catalogue): CatalogT {
  let json = catalogJson.get(c);
  if (!json) {
    json = {
      data: c.list.map((m) => ({
        id: m.id,
        display_name: m.displayName,
        owned_by: m.ownedBy,
        context_window: m.contextWindow,
        max_output_tokens: m.kind === 'embedding' ? 0 : m.maxOutputTokens,
        kind: m.kind,
        dimensions: m.dimensions ?? null,
        pricing: m.pricingJson,
        official_pricing: m.officialPricingJson,
        discount_pct: discountPct(m),
      })),
    };
    catalogJson.set(c, json);
  }
  return json;
}

interface DepositRow {
  id: string;
  method: string;
  status: DepositStatus;
  amount: string;
  currency: string;
  credit_nano: bigint;
  created_at: Date;
  cursor_at: string;
  paid_at: Date | null;
}

export function accountHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function catalogue(ex: Exchange): Promise<Reply> {
    await requireSession(gw, ex);
    return { status: 200, body: catalog(gw.catalogue.current) };
  }

  /** The same list for the landing page, before anyone has an account. */
  async function publicCatalogue(): Promise<Reply> {
    return { status: 200, body: catalog(gw.catalogue.current), headers: { 'cache-control': 'public, max-age=60' } };
  }

  async function balance(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    // The dashboard reads this on every page: it also says whether to offer the admin pages, so
    // that a user's page need not ask the admin API and be refused.
    const [b, [user]] = await Promise.all([
      gw.ledger.balance(userId),
      sql<{ is_admin: boolean }[]>`SELECT is_admin FROM users WHERE id = ${userId}`,
    ]);
    const body: BalanceT = {
      currency: 'USD',
      balance_usd: nanoToUsd(b.balance),
      reserved_usd: nanoToUsd(b.reserved),
      available_usd: nanoToUsd(b.available < 0n ? 0n : b.available),
      is_admin: user?.is_admin === true,
    };
    return { status: 200, body };
  }

  async function deposits(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const q = parseQuery(DepositsQuery, ex.query);
    // The sweeper runs every few seconds; the owner sees an expiry at once.
    await sweepExpired(sql, userId);
    const where: Fragment[] = [sql`user_id = ${userId}`, ...rangeConditions(sql, q)];
    // Newest first, ties by id ascending: the order of the deposits_user index.
    if (q.cursor) {
      where.push(sql`created_at <= ${q.cursor.at}::timestamptz`);
      where.push(sql`(created_at < ${q.cursor.at}::timestamptz OR id > ${q.cursor.id}::uuid)`);
    }
    const rows = await sql<DepositRow[]>`
      SELECT id, method, status, amount::text AS amount, currency, credit_nano, created_at,
             ${sql.unsafe(CURSOR_AT_SQL)} AS cursor_at, paid_at
      FROM deposits
      WHERE ${and(sql, where)}
      ORDER BY created_at DESC, id ASC
      LIMIT ${q.limit + 1}`;
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    const body: DepositPageT = {
      data: page.map((d) => ({
        id: d.id,
        method: d.method,
        status: d.status,
        amount: d.amount,
        currency: d.currency,
        credit_usd: nanoToUsd(d.credit_nano),
        created_at: d.created_at.toISOString(),
        paid_at: d.paid_at?.toISOString() ?? null,
      })),
      next_cursor: rows.length > q.limit && last ? encodeCursor('deposits', { at: last.cursor_at, id: last.id }) : null,
    };
    return { status: 200, body };
  }

  return { catalogue, publicCatalogue, balance, deposits };
}
