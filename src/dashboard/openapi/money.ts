// The dashboard's OpenAPI document: the catalogue, the balance, deposits, redemption codes and
// the low-balance alert.

import * as S from '../../admin/shapes.js';
import { MODEL_KINDS } from '../../catalogue/schema.js';
import { errors, instant, int, json, money, nullableInstant, ok, pageParams, rangeParams, ref, shape } from './common.js';

const pricing = {
  type: 'object',
  description: 'USD per million tokens',
  properties: { input: { type: 'number' }, output: { type: 'number' }, cache_read: { type: 'number' }, cache_write: { type: 'number' } },
  required: ['input', 'output', 'cache_read', 'cache_write'],
};


const deposit = {
  id: { type: 'string', format: 'uuid' },
  method: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'paid', 'expired', 'failed'] },
  amount: { type: 'string', description: 'Amount to pay in the deposit currency, decimal string' },
  currency: { type: 'string' },
  credit_usd: money('Credited (or to be credited) to the balance'),
  created_at: instant('Creation time'),
  paid_at: nullableInstant('When it was paid'),
};
const depositDetail = {
  ...deposit,
  expires_at: nullableInstant('When an unpaid invoice expires'),
  qr_string: { type: ['string', 'null'], description: 'While pending, for QRIS' },
  qr_png: { type: ['string', 'null'], description: 'While pending, for QRIS: PNG data URL' },
  payment_url: { type: ['string', 'null'], description: 'While pending, for epusdt' },
};


export const moneyPaths = {
  '/catalog': {
    get: {
      summary: 'Models, prices and discounts',
      responses: {
        '200': ok('The catalogue', {
          type: 'object',
          properties: {
            data: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  display_name: { type: 'string' },
                  owned_by: { type: 'string' },
                  context_window: { type: 'integer' },
                  max_output_tokens: { type: 'integer', description: '0 for an embedding model' },
                  kind: { type: 'string', enum: [...MODEL_KINDS], description: 'chat: the chat surfaces; embedding: POST /v1/embeddings (input prices only)' },
                  dimensions: { type: ['integer', 'null'], minimum: 1, description: 'Embedding models: the length of their vectors, when the catalogue says' },
                  pricing,
                  official_pricing: pricing,
                  discount_pct: { type: 'integer', description: 'round((1 − pricing.input / official_pricing.input) × 100); 0 without an official input price' },
                },
                required: ['id', 'display_name', 'owned_by', 'context_window', 'max_output_tokens', 'kind', 'dimensions', 'pricing', 'official_pricing', 'discount_pct'],
              },
            },
          },
          required: ['data'],
        }),
        ...errors(401),
      },
    },
  },
  '/balance': {
    get: {
      summary: 'Balance, amounts held by requests in flight, and what is available',
      responses: {
        '200': ok('Balance', {
          type: 'object',
          properties: {
            currency: { const: 'USD' },
            balance_usd: money('Balance'),
            reserved_usd: money('Held for requests in flight, and by the leases of other gateway processes (handed back within LEASE_WINDOW_MS of their last request)'),
            available_usd: money('balance − reserved'),
            is_admin: { type: 'boolean', description: 'The account may use the admin API (/api/admin/*); the dashboard shows its admin pages on it' },
          },
          required: ['currency', 'balance_usd', 'reserved_usd', 'available_usd'],
        }),
        ...errors(401),
      },
    },
  },
  '/deposits': {
    get: {
      summary: 'Deposits, newest first',
      parameters: [...rangeParams, ...pageParams],
      responses: {
        '200': ok('One page', {
          type: 'object',
          properties: { data: { type: 'array', items: ref('Deposit') }, next_cursor: { type: ['string', 'null'] } },
          required: ['data', 'next_cursor'],
        }),
        ...errors(400, 401),
      },
    },
  },
  '/deposits/{id}': {
    get: {
      summary: 'One of your deposits: poll its status, or show a pending one\'s QR or checkout link again',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
      responses: { '200': ok('The deposit', ref('DepositDetail')), ...errors(401, 404) },
    },
  },
  '/deposit/info': {
    get: {
      summary: 'The deposit methods this gateway offers, with their public parameters',
      description: 'Only methods whose configuration is complete are listed.',
      responses: {
        '200': ok('Methods', { type: 'object', properties: { methods: { type: 'array', items: ref('DepositMethod') } }, required: ['methods'] }),
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
      requestBody: { required: true, content: json({ type: 'object', properties: { amount_idr: { type: ['integer', 'string'], description: 'Whole rupiah' } }, required: ['amount_idr'] }) },
      responses: {
        '201': ok('Invoice opened', {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            status: { const: 'pending' },
            amount_idr: { type: 'integer', description: 'Rupiah to pay' },
            credit_usd: money('Credited when paid'),
            qr_string: { type: 'string', description: 'The QRIS payload (EMVCo text)' },
            qr_png: { type: 'string', pattern: '^data:image/png;base64,', description: 'The same as a PNG data URL' },
            expires_at: instant('Pay before this'),
          },
          required: ['id', 'status', 'amount_idr', 'credit_usd', 'qr_string', 'qr_png', 'expires_at'],
        }),
        ...errors(400, 401, 404, 413, 429, 502),
      },
    },
  },
  '/deposit/epusdt/create': {
    post: {
      summary: 'Open a hosted USDT/USDC checkout',
      description: 'Pay on payment_url. Past DEPOSIT_MAX_OPEN open invoices, 429.',
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          properties: {
            amount_usd: { type: ['number', 'string'], description: 'USD of credit, at most 2 decimals' },
            token: { type: 'string', description: 'One of deposit/info\'s tokens (e.g. usdt.trc20); default the first' },
          },
          required: ['amount_usd'],
        }),
      },
      responses: {
        '201': ok('Checkout opened', {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            status: { const: 'pending' },
            amount_usd: money('Credited when paid'),
            payment_url: { type: 'string', description: 'The hosted checkout page' },
            expires_at: instant('Pay before this'),
          },
          required: ['id', 'status', 'amount_usd', 'payment_url', 'expires_at'],
        }),
        ...errors(400, 401, 404, 413, 429, 502),
      },
    },
  },
  '/redeem': {
    post: {
      summary: 'Redeem an operator\'s code: its amount is credited to the balance at once',
      description: 'A code credits once however many redeem it at the same moment. Failed codes count against the account like failed sign-ins (LOGIN_MAX_ATTEMPTS per LOGIN_WINDOW_S); past that, 429 with retry-after.',
      requestBody: { required: true, content: json(shape(S.RedeemBody)) },
      responses: { '200': ok('Credited', shape(S.RedeemAnswer)), ...errors(400, 401, 409, 413, 429) },
    },
  },
  '/alerts': {
    get: {
      summary: 'The low-balance alert: its threshold, and whether the balance is below it (the banner)',
      responses: { '200': ok('The alert', shape(S.Alerts)), ...errors(401) },
    },
    post: {
      summary: 'Set the low-balance threshold (a mail once per crossing), or null to turn the alert off',
      requestBody: { required: true, content: json(shape(S.AlertsBody)) },
      responses: { '200': ok('The alert as it is now', shape(S.Alerts)), ...errors(400, 401, 413) },
    },
  },
};

export const moneySchemas = {
  Deposit: { type: 'object', properties: deposit, required: Object.keys(deposit) },
  DepositDetail: { type: 'object', properties: depositDetail, required: Object.keys(depositDetail) },
  DepositMethod: {
    type: 'object',
    properties: {
      id: { type: 'string', enum: ['qris', 'epusdt'], description: 'qris: POST /topup/qris; epusdt: POST /deposit/epusdt/create' },
      currency: { type: 'string', description: 'Currency of the amount asked for (IDR for qris, USD for epusdt)' },
      min: { type: 'string', description: 'Smallest amount, decimal string in currency' },
      max: { type: 'string', description: 'Largest amount, decimal string in currency' },
      rate: { type: 'string', description: 'qris: rupiah per USD of credit; epusdt: pay_currency units per USD' },
      fee_pct: { type: 'string', description: 'Percent taken off the credit' },
      expiry_s: int('Seconds an invoice stays payable'),
      pay_currency: { type: 'string', description: 'epusdt: what the checkout asks for (USD when the server converts itself)' },
      tokens: { type: 'array', items: { type: 'string' }, description: 'epusdt: the coins/networks one may pick (token); empty: no choice' },
    },
    required: ['id', 'currency', 'min', 'max', 'rate', 'fee_pct', 'expiry_s'],
  },
};
