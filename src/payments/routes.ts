// POST /api/payments/{provider}/notify: provider notifications, authenticated by the provider's
// signature over the raw body. Each refusal is logged with its reason; the acknowledgement is
// what the provider expects (its notifyAnswer: plain text `ok` for epusdt; JSON for the others).

import type { Gateway } from '../services.js';
import { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import type { Router } from '../server/router.js';
import { isStoreOutage } from '../store/outage.js';
import type { Provider } from './deposits.js';
import { PROVIDERS } from './providers.js';

const MAX_NOTIFICATION_BYTES = 64 * 1024;

const plain = (ex: Exchange, status: number, text: string) =>
  ex.send(status, text, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
const jsonError = (ex: Exchange, status: number, code: string, message: string) =>
  ex.json(status, { error: { code, message } }, { 'cache-control': 'no-store' });

export function registerPayments(router: Router, gw: Gateway): void {
  for (const { id: provider, notifyAnswer } of PROVIDERS) {
    const text = notifyAnswer === 'text';
    router.add({
      method: 'post',
      path: `/api/payments/${provider}/notify`,
      name: `payments_${provider}_notify`,
      onError: (ex, err) =>
        text ? plain(ex, err.status, err.message) : jsonError(ex, err.status, err.code ?? err.kind, err.message),
      handler: (ex) => notify(gw, provider, text, ex),
    });
  }
  router.add({
    method: 'any',
    path: '/api/payments/*',
    name: 'payments_unknown',
    onError: (ex, err) => jsonError(ex, err.status, err.kind, err.message),
    handler: (ex) => {
      throw new GatewayError('not_found', `No such endpoint: ${ex.method} ${ex.path.slice(0, 200)}.`);
    },
  });
}

async function notify(gw: Gateway, provider: Provider, text: boolean, ex: Exchange): Promise<void> {
  const raw = ex.readBody(MAX_NOTIFICATION_BYTES);
  const from = ex.remoteAddress;
  let body: Buffer;
  try {
    body = await raw;
  } catch (err) {
    gw.log.warn({ provider, from, reason: (err as Error).message }, 'payment notification refused');
    throw err;
  }
  let result;
  try {
    result = await gw.payments.notify(provider, body, ex.headers);
  } catch (err) {
    if (!isStoreOutage(err)) throw err;
    gw.log.warn({ err, provider }, 'payment notification: store unreachable; the provider will retry');
    throw new GatewayError('unavailable', 'Temporarily unavailable; send it again later.');
  }
  if (!result.ok) {
    gw.log.warn(
      { provider, from, deposit_id: result.depositId, reason: result.reason },
      'payment notification refused',
    );
    if (text) plain(ex, result.httpStatus, `refused: ${result.reason}`);
    else jsonError(ex, result.httpStatus, 'refused', result.reason);
    return;
  }
  gw.log.debug(
    { provider, deposit_id: result.depositId, status: result.status, note: result.note },
    'payment notification handled',
  );
  if (text) plain(ex, 200, 'ok');
  else ex.json(200, { deposit_id: result.depositId, status: result.status }, { 'cache-control': 'no-store' });
}
