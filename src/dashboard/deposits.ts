// Adding funds: the deposit methods on offer, opening a QRIS or USDT/USDC invoice, and one
// deposit read back (to poll its status, or show its QR again).

import * as v from 'valibot';
import type { Gateway } from '../services.js';
import { DepositError } from '../payments/deposits.js';
import type { Exchange } from '../server/exchange.js';
import { DashboardError, notFound } from './errors.js';
import { PREFIX, readJson, type Reply } from './http.js';
import { EpusdtCreateBody, parseBody, TopupQrisBody, Uuid } from './schemas.js';
import { requireSession } from './sessions.js';

const DEPOSIT_PATH = `${PREFIX}/deposits/`;

/** The payments layer's refusals in the dashboard envelope. */
async function asDashboard<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof DepositError) throw new DashboardError(err.status, err.code, err.message, err.retryAfterS, err.detail);
    throw err;
  }
}

export function depositHandlers(gw: Gateway) {
  async function info(ex: Exchange): Promise<Reply> {
    await requireSession(gw, ex);
    return { status: 200, body: gw.payments.info() };
  }

  async function topupQris(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const { amount_idr } = parseBody(TopupQrisBody, await raw);
    return { status: 201, body: await asDashboard(gw.payments.createQris(userId, amount_idr)) };
  }

  async function epusdtCreate(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const { amount_usd, token } = parseBody(EpusdtCreateBody, await raw);
    return { status: 201, body: await asDashboard(gw.payments.createEpusdt(userId, amount_usd, token)) };
  }

  async function one(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    // The raw rest of the path, as for keys: a uuid needs no decoding.
    const id = ex.path.slice(DEPOSIT_PATH.length);
    // Someone else's deposit and a malformed id get the same answer.
    if (!v.is(Uuid, id)) throw notFound('No such deposit.');
    const d = await gw.payments.view(userId, id.toLowerCase());
    if (!d) throw notFound('No such deposit.');
    return { status: 200, body: d };
  }

  return { info, topupQris, epusdtCreate, one };
}
