// /api/admin/users and /api/admin/audit: find an account, see its money, keys and usage, move
// its balance with a reason, disable it, give it the admin role; read the audit log.

import { nanoToUsd, usdToNano } from '../billing/money.js';
import { badRequest, notFound } from '../dashboard/errors.js';
import type { Reply } from '../dashboard/http.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { LAST_USED_SQL } from '../accounts/keys.js';
import { adjustBalance, findAccount, setAdmin, setDisabled, type AccountRow } from './accounts.js';
import { listAudit } from './audit.js';
import { query, uuidParam, type AdminCall } from './http.js';
import {
  AdjustBody,
  AuditQuery,
  DisableBody,
  RoleBody,
  UsersQuery,
  type AdminUserDetailT,
  type AdminUserT,
  type AuditListT,
} from './shapes.js';

const DEFAULT_PAGE = 50;
const pageSize = (limit: string | undefined, max = 200) => Math.min(max, limit ? Number(limit) : DEFAULT_PAGE);

export const userJson = (u: AccountRow): AdminUserT => ({
  id: u.id,
  email: u.email,
  is_admin: u.is_admin,
  disabled: u.disabled_at !== null,
  email_verified: u.email_verified_at !== null,
  created_at: u.created_at.toISOString(),
  balance_usd: nanoToUsd(u.balance_nano),
});

export function userHandlers(gw: Gateway) {
  const sql = gw.sql;

  async function list(ex: Exchange): Promise<Reply> {
    const q = query(ex, UsersQuery);
    const limit = pageSize(q.limit);
    // A substring of the address; LIKE's own wildcards in it are taken literally.
    const pattern = q.q
      ? `%${q.q
          .trim()
          .toLowerCase()
          .replace(/[\\%_]/g, (c) => `\\${c}`)}%`
      : null;
    // Each condition only when asked for: behind `$1 IS NULL OR …` a generic plan uses no index.
    const rows = await sql<AccountRow[]>`
      SELECT id, email, balance_nano, is_admin, disabled_at, email_verified_at, created_at FROM users
      WHERE true ${pattern ? sql`AND email LIKE ${pattern}` : sql``} ${q.after ? sql`AND email > ${q.after}` : sql``}
      ORDER BY email LIMIT ${limit + 1}`;
    const page = rows.slice(0, limit);
    return {
      status: 200,
      body: { data: page.map(userJson), next_after: rows.length > limit ? page.at(-1)!.email : null },
    };
  }

  async function detail(id: string): Promise<Reply> {
    const u = await findAccount(sql, { id });
    if (!u) throw notFound('No such user.');
    const [b, keys, usage, adjustments] = await Promise.all([
      gw.ledger.balance(id),
      sql<
        {
          id: string;
          name: string;
          prefix: string;
          created_at: Date;
          last_used_at: Date | null;
          revoked_at: Date | null;
        }[]
      >`
        SELECT id, name, prefix, created_at, ${sql.unsafe(LAST_USED_SQL)} AS last_used_at, revoked_at FROM api_keys k
        WHERE user_id = ${id} ORDER BY created_at DESC, id`,
      sql<{ model: string; requests: bigint; prompt_tokens: bigint; completion_tokens: bigint; cost_nano: bigint }[]>`
        SELECT model, sum(requests)::bigint AS requests, sum(prompt_tokens)::bigint AS prompt_tokens,
               sum(completion_tokens)::bigint AS completion_tokens, sum(cost_nano)::bigint AS cost_nano
        FROM usage_daily WHERE user_id = ${id} AND day > (now() AT TIME ZONE 'UTC')::date - 30
        GROUP BY model ORDER BY 5 DESC, 1`,
      sql<{ id: string; amount_nano: bigint; reason: string; actor: string; created_at: Date }[]>`
        SELECT id, amount_nano, reason, actor, created_at FROM balance_adjustments WHERE user_id = ${id} ORDER BY created_at DESC LIMIT 100`,
    ]);
    const body: AdminUserDetailT = {
      user: userJson(u),
      balance: {
        balance_usd: nanoToUsd(b.balance),
        reserved_usd: nanoToUsd(b.reserved),
        available_usd: nanoToUsd(b.available < 0n ? 0n : b.available),
      },
      keys: keys.map((k) => ({
        ...k,
        created_at: k.created_at.toISOString(),
        last_used_at: k.last_used_at?.toISOString() ?? null,
        revoked_at: k.revoked_at?.toISOString() ?? null,
      })),
      usage: usage.map((r) => ({
        model: r.model,
        requests: Number(r.requests),
        prompt_tokens: Number(r.prompt_tokens),
        completion_tokens: Number(r.completion_tokens),
        cost_usd: nanoToUsd(r.cost_nano),
      })),
      adjustments: adjustments.map((a) => ({
        id: a.id,
        amount_usd: nanoToUsd(a.amount_nano),
        reason: a.reason,
        actor: a.actor,
        created_at: a.created_at.toISOString(),
      })),
    };
    return { status: 200, body };
  }

  async function adjust(call: AdminCall, id: string, sign: 1n | -1n): Promise<Reply> {
    const { amount_usd, reason } = await call.body(AdjustBody);
    const amount = usdToNano(amount_usd);
    if (amount === 0n) throw badRequest('invalid_request', '"amount_usd" must be more than 0.');
    const r = await adjustBalance(sql, gw.hot, call.actor, id, sign * amount, reason);
    return {
      status: 200,
      body: {
        adjustment_id: r.adjustmentId,
        balance_before_usd: nanoToUsd(r.before),
        balance_usd: nanoToUsd(r.balance),
      },
    };
  }

  /** GET /users/{id}; POST /users/{id}/credit|debit|disable|enable|role. */
  async function one(ex: Exchange, call: AdminCall): Promise<Reply> {
    const [idText, action, ...extra] = call.rest;
    const id = uuidParam(idText, 'user');
    if (extra.length > 0) throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    if (ex.method === 'GET' && action === undefined) return detail(id);
    if (ex.method !== 'POST') throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    switch (action) {
      case 'credit':
        return adjust(call, id, 1n);
      case 'debit':
        return adjust(call, id, -1n);
      case 'disable':
      case 'enable': {
        const { reason } = await call.body(DisableBody);
        if (action === 'disable' && id === call.actor.id)
          throw badRequest('invalid_request', 'An admin cannot disable their own account.');
        return {
          status: 200,
          body: userJson(await setDisabled(sql, gw.hot, call.actor, id, action === 'disable', reason ?? null)),
        };
      }
      case 'role': {
        const { admin } = await call.body(RoleBody);
        if (!admin && id === call.actor.id)
          throw badRequest('invalid_request', 'An admin cannot take their own admin role.');
        return { status: 200, body: userJson(await setAdmin(sql, call.actor, id, admin)) };
      }
      default:
        throw notFound(`No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    }
  }

  async function audit(ex: Exchange): Promise<Reply> {
    const q = query(ex, AuditQuery);
    const limit = pageSize(q.limit);
    const rows = await listAudit(sql, {
      limit: limit + 1,
      beforeId: q.before ? BigInt(q.before) : undefined,
      action: q.action,
    });
    const page = rows.slice(0, limit);
    const body: AuditListT = {
      data: page.map((r) => ({
        id: r.id.toString(),
        actor: r.actor,
        actor_id: r.actor_id,
        action: r.action,
        target: r.target,
        reason: r.reason,
        before: r.before ?? null,
        after: r.after ?? null,
        created_at: r.created_at.toISOString(),
      })),
      next_before: rows.length > limit ? page.at(-1)!.id.toString() : null,
    };
    return { status: 200, body };
  }

  return { list, one, audit };
}
