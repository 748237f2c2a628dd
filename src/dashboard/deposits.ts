// Adding funds: the deposit methods on offer, opening an invoice of one of them (POST
// /deposits/{method}, the body as the method's provider says), and one deposit read back (to
// poll its status, or show its QR again).

import * as v from 'valibot';
import type { Gateway } from '../services.js';
import type { DepositMethodId } from '../payments/configs.js';
import { DepositError } from '../payments/deposits.js';
import type { Exchange } from '../server/exchange.js';
import { DashboardError, notFound } from './errors.js';
import { PREFIX, readJson, type Reply } from './http.js';
import { methodBody } from '../payments/service.js';
import { parseBody, Uuid } from './schemas.js';

/** Two methods' older paths, aliases of POST /deposits/{method}, kept for clients written against them. */
export const DEPOSIT_ALIASES: Partial<Record<DepositMethodId, string>> = {
  qris: '/topup/qris',
  epusdt: '/deposit/epusdt/create',
};
import { requireSession } from './sessions.js';
import type { DepositDetailT } from './shapes/money.js';

const DEPOSIT_PATH = `${PREFIX}/deposits/`;

/** The payments layer's refusals in the dashboard envelope. */
async function asDashboard<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof DepositError)
      throw new DashboardError(err.status, err.code, err.message, err.retryAfterS, err.detail);
    throw err;
  }
}

export function depositHandlers(gw: Gateway) {
  async function info(ex: Exchange): Promise<Reply> {
    await requireSession(gw, ex);
    return { status: 200, body: gw.payments.info() };
  }

  /** The handler of POST /deposits/{method} (and of the method's older paths). */
  function open(method: string) {
    const body = methodBody(method);
    if (!body) throw new Error(`no payment provider serves the deposit method ${method}`);
    return async (ex: Exchange): Promise<Reply> => {
      const raw = readJson(ex);
      const { userId } = await requireSession(gw, ex);
      const parsed = parseBody(body, await raw);
      return { status: 201, body: await asDashboard(gw.payments.open(method, userId, parsed)) };
    };
  }

  async function one(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    // The raw rest of the path, as for keys: a uuid needs no decoding.
    const id = ex.path.slice(DEPOSIT_PATH.length);
    // Someone else's deposit and a malformed id get the same answer.
    if (!v.is(Uuid, id)) throw notFound('No such deposit.');
    const d = await gw.payments.view(userId, id.toLowerCase());
    if (!d) throw notFound('No such deposit.');
    const body: DepositDetailT = d;
    return { status: 200, body };
  }

  return { info, open, one };
}
