// The error envelope of the paths outside the API surfaces (ops, the web app's static files).

import type { GatewayError } from '../errors.js';
import type { Exchange } from './exchange.js';

/** `{"error":{"code","message"}}`. */
export const plainError = (ex: Exchange, err: GatewayError) => {
  const headers: Record<string, string> = err.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
  ex.json(err.status, { error: { code: err.kind, message: err.message } }, headers);
};
