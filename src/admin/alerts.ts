// Alerts by mail: a user whose balance falls below the threshold they chose gets one mail per
// crossing (and a banner, GET /api/dashboard/alerts); the admins get one for a deposit that stays
// unpaid or fails, and for a route that stays in cooldown. Every gateway process looks every
// ALERT_CHECK_MS; an alert is sent by the process whose insert into alerts_sent claimed it, so
// it goes once however many look.

import type { Logger } from 'pino';
import { nanoToUsd, usdToNano } from '../billing/money.js';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config.js';
import { badRequest } from '../dashboard/errors.js';
import { readJson, type Reply } from '../dashboard/http.js';
import type { Mail, Mailer } from '../dashboard/mail.js';
import { parseBody } from '../dashboard/schemas.js';
import { requireSession } from '../dashboard/sessions.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import type { Sql } from '../store/sql.js';
import { AlertsBody, type AlertsT } from './shapes.js';

type AlertConfig = Pick<
  Config,
  'ALERT_CHECK_MS' | 'ALERT_DEPOSIT_UNPAID_S' | 'ALERT_ROUTE_COOLDOWN_S' | 'ROUTE_COOLDOWN_MS' | 'publicUrl'
>;

/** One round: re-arm what recovered, then claim and send what is due. Returns the mails sent. */
export async function checkAlerts(sql: Sql, mailer: Mailer, config: AlertConfig): Promise<number> {
  let sent = 0;
  // A balance back at or above its threshold (or a threshold removed) arms the next crossing.
  await sql`
    DELETE FROM alerts_sent a USING users u
    WHERE a.kind = 'low_balance' AND a.subject = u.id::text AND (u.low_balance_nano IS NULL OR u.balance_nano >= u.low_balance_nano)`;
  const low = await sql<{ id: string; email: string; balance_nano: bigint; low_balance_nano: bigint }[]>`
    WITH due AS (
      SELECT id, email, balance_nano, low_balance_nano FROM users
      WHERE low_balance_nano IS NOT NULL AND balance_nano < low_balance_nano AND disabled_at IS NULL),
    claimed AS (
      INSERT INTO alerts_sent (kind, subject) SELECT 'low_balance', id::text FROM due ON CONFLICT DO NOTHING RETURNING subject)
    SELECT due.id, due.email, due.balance_nano, due.low_balance_nano FROM due JOIN claimed ON claimed.subject = due.id::text`;
  for (const u of low) {
    await send(sql, mailer, 'low_balance', u.id, {
      to: u.email,
      link: `${config.publicUrl}/topup`,
      subject: `Your airouter balance is below $${nanoToUsd(u.low_balance_nano)}`,
      text: `Your balance is $${nanoToUsd(u.balance_nano)}, below the $${nanoToUsd(u.low_balance_nano)} you asked to be told about.\n\nTop up: ${config.publicUrl}/topup\n\nYou get this once each time the balance falls below that amount; change it on the overview page.\n`,
    });
    sent++;
  }

  const admins = (
    await sql<{ email: string }[]>`SELECT email FROM users WHERE is_admin AND disabled_at IS NULL ORDER BY email`
  ).map((a) => a.email);
  const deposits = await sql<
    { id: string; email: string; method: string; status: string; amount: string; currency: string; created_at: Date }[]
  >`
    WITH due AS (
      SELECT d.id, u.email, d.method, d.status, d.amount::text AS amount, d.currency, d.created_at FROM deposits d JOIN users u ON u.id = d.user_id
      WHERE d.status = 'failed' OR (d.status = 'pending' AND d.created_at <= now() - make_interval(secs => ${config.ALERT_DEPOSIT_UNPAID_S}))),
    claimed AS (
      INSERT INTO alerts_sent (kind, subject) SELECT 'deposit_' || status, id::text FROM due ON CONFLICT DO NOTHING RETURNING kind, subject)
    SELECT due.* FROM due JOIN claimed ON claimed.subject = due.id::text AND claimed.kind = 'deposit_' || due.status`;
  // Routes that failed every attempt and kept cooling down through the whole window.
  await sql`
    DELETE FROM alerts_sent a WHERE a.kind = 'route_cooldown' AND NOT EXISTS (
      SELECT 1 FROM route_health h WHERE h.route = a.subject AND h.cooling_until > now())`;
  const routes = await sql<{ route: string; since: Date; attempts: bigint }[]>`
    WITH recent AS (
      SELECT route, min(minute) FILTER (WHERE cooldowns > 0) AS since, sum(attempts)::bigint AS attempts, sum(errors)::bigint AS errors, max(cooling_until) AS until
      FROM route_health WHERE minute > now() - make_interval(secs => ${config.ALERT_ROUTE_COOLDOWN_S + 120}) GROUP BY route),
    due AS (
      SELECT route, since, attempts FROM recent
      WHERE until > now() AND attempts = errors AND since <= now() - make_interval(secs => ${config.ALERT_ROUTE_COOLDOWN_S})),
    claimed AS (
      INSERT INTO alerts_sent (kind, subject) SELECT 'route_cooldown', route FROM due ON CONFLICT DO NOTHING RETURNING subject)
    SELECT due.* FROM due JOIN claimed ON claimed.subject = due.route`;
  if (admins.length > 0) {
    for (const d of deposits) {
      await send(sql, mailer, `deposit_${d.status}`, d.id, {
        to: admins.join(', '),
        link: `${config.publicUrl}/admin/deposits`,
        subject:
          d.status === 'failed'
            ? `Deposit failed: ${d.amount} ${d.currency} (${d.method}) of ${d.email}`
            : `Deposit unpaid for ${Math.round(config.ALERT_DEPOSIT_UNPAID_S / 60)} minutes: ${d.amount} ${d.currency} (${d.method}) of ${d.email}`,
        text: `Deposit ${d.id} of ${d.email}, ${d.amount} ${d.currency} by ${d.method}, opened ${d.created_at.toISOString()}, is ${d.status}.\n\nConfirm or fail it by hand: ${config.publicUrl}/admin/deposits\n`,
      });
      sent++;
    }
    for (const r of routes) {
      await send(sql, mailer, 'route_cooldown', r.route, {
        to: admins.join(', '),
        link: `${config.publicUrl}/admin/health`,
        subject: `Upstream route ${r.route} has been cooling down since ${r.since.toISOString()}`,
        text: `Every one of the last ${r.attempts} attempts on ${r.route} failed, and it has been cooling down since ${r.since.toISOString()}.\n\nHealth: ${config.publicUrl}/admin/health\n`,
      });
      sent++;
    }
  }
  return sent;
}

/** A claimed alert whose mail could not go is given back, to be tried again next round. */
async function send(sql: Sql, mailer: Mailer, kind: string, subject: string, mail: Mail): Promise<void> {
  try {
    await mailer.send(mail);
  } catch (err) {
    await sql`DELETE FROM alerts_sent WHERE kind = ${kind} AND subject = ${subject}`;
    throw err;
  }
}

/** Runs checkAlerts every ALERT_CHECK_MS in this process. */
export function startAlerts(
  sql: Sql,
  mailer: Mailer,
  config: AlertConfig,
  log: Logger,
  clock: Clock = systemClock,
): () => void {
  let running = false;
  return clock.every(config.ALERT_CHECK_MS, () => {
    if (running) return;
    running = true;
    return checkAlerts(sql, mailer, config)
      .catch((err: unknown) => log.warn({ err }, 'alerts: check failed; trying again next round'))
      .finally(() => (running = false));
  });
}

/** GET and POST /api/dashboard/alerts: the user's threshold, and whether the balance is below it. */
export function alertHandlers(gw: Gateway) {
  async function state(userId: string): Promise<AlertsT> {
    const [u] = await gw.sql<
      { low_balance_nano: bigint | null }[]
    >`SELECT low_balance_nano FROM users WHERE id = ${userId}`;
    // The balance the user sees (the hot one), not Postgres's, which lags by the outbox.
    const b = await gw.ledger.balance(userId);
    const threshold = u?.low_balance_nano ?? null;
    return {
      low_balance_usd: threshold === null ? null : nanoToUsd(threshold),
      below: threshold !== null && b.balance < threshold,
    };
  }
  async function get(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    return { status: 200, body: await state(userId) };
  }
  async function set(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const { low_balance_usd } = parseBody(AlertsBody, await raw);
    const nano = low_balance_usd === null ? null : usdToNano(low_balance_usd);
    if (nano === 0n)
      throw badRequest('invalid_request', '"low_balance_usd" must be more than 0, or null to turn the alert off.');
    await gw.sql`UPDATE users SET low_balance_nano = ${nano?.toString() ?? null}::bigint WHERE id = ${userId}`;
    return { status: 200, body: await state(userId) };
  }
  return { get, set };
}
