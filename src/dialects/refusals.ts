// The 400s the surfaces' terms share: an option refused, and one that costs more than tokens
// and is not sold on the model. The field is named in the message too: the Anthropic envelope
// has no `param`.

import type { Model } from '../catalogue/index.js';
import { GatewayError } from '../errors.js';

export const refuse = (param: string, message: string) => new GatewayError('invalid_request', message, { param, code: 'unsupported_option' });

export const notSold = (param: string, what: string, model: Model) =>
  refuse(param, `${param}: ${what} costs more than plain tokens and is not offered on "${model.id}" by this gateway.`);
