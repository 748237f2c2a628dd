// The dashboard's OpenAPI document: the catalogue, the balance, deposits, redemption codes and
// the low-balance alert.

import * as S from '../../admin/shapes.js';
import { DEPOSIT_METHODS, type DepositMethodId } from '../../payments/configs.js';
import { PROVIDERS } from '../../payments/providers.js';
import { DEPOSIT_ALIASES } from '../deposits.js';
import { Balance, Catalog, DepositDetail, DepositMethods, DepositPage } from '../shapes/money.js';
import { body, errors, ok, pageParams, rangeParams } from './common.js';

/** A method's POST: its providers share its body and answer; the first one's words. */
function openDeposit(method: DepositMethodId, aside: string) {
  const p = PROVIDERS.find((x) => x.method === method)!;
  return {
    post: {
      summary: p.doc.summary + aside,
      description: p.doc.description,
      requestBody: body(p.body),
      responses: {
        '201': ok(p.doc.answered, p.doc.answer),
        ...errors(400, 401, 404, 413, 429, 502),
      },
    },
  };
}

export const moneyPaths = {
  '/catalog': {
    get: {
      summary: 'Models, prices and discounts',
      responses: {
        '200': ok('The catalogue', Catalog),
        ...errors(401),
      },
    },
  },
  '/balance': {
    get: {
      summary: 'Balance, amounts held by requests in flight, and what is available',
      responses: {
        '200': ok('Balance', Balance),
        ...errors(401),
      },
    },
  },
  '/deposits': {
    get: {
      summary: 'Deposits, newest first',
      parameters: [...rangeParams, ...pageParams],
      responses: {
        '200': ok('One page', DepositPage),
        ...errors(400, 401),
      },
    },
  },
  '/deposits/{id}': {
    get: {
      summary: "One of your deposits: poll its status, or show a pending one's QR or checkout link again",
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      responses: { '200': ok('The deposit', DepositDetail), ...errors(401, 404) },
    },
  },
  '/deposit/info': {
    get: {
      summary: 'The deposit methods this gateway offers, with their public parameters',
      description: 'Only methods whose configuration is complete are listed.',
      responses: {
        '200': ok('Methods', DepositMethods),
        ...errors(401),
      },
    },
  },
  // POST /deposits/{method}, one per method a payment provider serves (src/payments/configs.ts),
  // in the words of the method's folder; first the two methods' older paths, aliases of theirs.
  ...Object.fromEntries(
    Object.entries(DEPOSIT_ALIASES).map(([method, path]) => [path, openDeposit(method as DepositMethodId, '')]),
  ),
  ...Object.fromEntries(
    DEPOSIT_METHODS.map((method) => {
      const alias = DEPOSIT_ALIASES[method];
      return [`/deposits/${method}`, openDeposit(method, alias ? ` (POST ${alias} is an alias)` : '')];
    }),
  ),
  '/redeem': {
    post: {
      summary: "Redeem an operator's code: its amount is credited to the balance at once",
      description:
        'A code credits once however many redeem it at the same moment. Failed codes count against the account like failed sign-ins (LOGIN_MAX_ATTEMPTS per LOGIN_WINDOW_S); past that, 429 with retry-after.',
      requestBody: body(S.RedeemBody),
      responses: { '200': ok('Credited', S.RedeemAnswer), ...errors(400, 401, 409, 413, 429) },
    },
  },
  '/alerts': {
    get: {
      summary: 'The low-balance alert: its threshold, and whether the balance is below it (the banner)',
      responses: { '200': ok('The alert', S.Alerts), ...errors(401) },
    },
    post: {
      summary: 'Set the low-balance threshold (a mail once per crossing), or null to turn the alert off',
      requestBody: body(S.AlertsBody),
      responses: { '200': ok('The alert as it is now', S.Alerts), ...errors(400, 401, 413) },
    },
  },
};
