// The dashboard's OpenAPI document: the catalogue, the balance, deposits, redemption codes and
// the low-balance alert.

import * as S from '../../admin/shapes.js';
import { EpusdtBody } from '../../payments/epusdt/index.js';
import { QrisBody } from '../../payments/qris/method.js';
import {
  Balance,
  Catalog,
  DepositDetail,
  DepositMethods,
  DepositPage,
  EpusdtInvoice,
  QrisInvoice,
} from '../shapes/money.js';
import { body, errors, ok, pageParams, rangeParams } from './common.js';

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
  '/topup/qris': {
    post: {
      summary: 'Open a QRIS invoice in rupiah',
      description:
        'Rate, fee and expiry are fixed now. With an own-merchant QRIS code the amount to pay is amount_idr plus a small suffix (1-999) that tells open invoices apart; ' +
        'amount_idr in the answer is what to pay, and the credit is computed from it. Past DEPOSIT_MAX_OPEN open invoices, 429.',
      requestBody: body(QrisBody),
      responses: {
        '201': ok('Invoice opened', QrisInvoice),
        ...errors(400, 401, 404, 413, 429, 502),
      },
    },
  },
  '/deposit/epusdt/create': {
    post: {
      summary: 'Open a hosted USDT/USDC checkout',
      description: 'Pay on payment_url. Past DEPOSIT_MAX_OPEN open invoices, 429.',
      requestBody: body(EpusdtBody),
      responses: {
        '201': ok('Checkout opened', EpusdtInvoice),
        ...errors(400, 401, 404, 413, 429, 502),
      },
    },
  },
  // POST /deposits/{method}, one per method a payment provider serves (src/payments/configs.ts):
  // the same operation as its alias above. Getters, because an entry cannot name its sibling.
  get '/deposits/qris'(): Record<string, unknown> {
    return {
      post: {
        ...moneyPaths['/topup/qris'].post,
        summary: 'Open a QRIS invoice in rupiah (POST /topup/qris is an alias)',
      },
    };
  },
  get '/deposits/epusdt'(): Record<string, unknown> {
    return {
      post: {
        ...moneyPaths['/deposit/epusdt/create'].post,
        summary: 'Open a hosted USDT/USDC checkout (POST /deposit/epusdt/create is an alias)',
      },
    };
  },
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
