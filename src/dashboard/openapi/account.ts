// The dashboard's OpenAPI document: signup, sessions and passwords.

import { LIMITS } from '../schemas.js';
import { errors, instant, json, ok } from './common.js';

const session = {
  type: 'object',
  properties: {
    user_id: { type: 'string', format: 'uuid' },
    token: { type: 'string', description: 'Session token, sent as "Authorization: Bearer <token>".' },
    expires_at: instant('When the session ends'),
  },
  required: ['user_id', 'token', 'expires_at'],
};

/** Signup and reset links: an address, answered the same whether or not it has an account. */
const emailBody = { required: true, content: json({ type: 'object', properties: { email: { type: 'string', format: 'email', maxLength: LIMITS.email } }, required: ['email'] }) };

/** A mailed link's token and the password it sets. */
const linkPasswordBody = {
  required: true,
  content: json({
    type: 'object',
    properties: {
      token: { type: 'string', maxLength: LIMITS.token, description: 'The token from the mailed link' },
      password: { type: 'string', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax },
    },
    required: ['token', 'password'],
  }),
};

export const accountPaths = {
  '/register': {
    post: {
      summary: 'Start signup: mails a verification link',
      description: 'Answers the same whether or not the email has an account. The link is {PUBLIC_URL}/verify?token=…, valid 24 hours, single use.',
      security: [],
      requestBody: emailBody,
      responses: { '202': ok('Accepted', { type: 'object', properties: { status: { const: 'verification_sent' } }, required: ['status'] }), ...errors(400, 413, 429) },
    },
  },
  '/verify': {
    post: {
      summary: 'Complete signup: set the password and open a session',
      security: [],
      requestBody: linkPasswordBody,
      responses: { '200': ok('Signed up and signed in', session), ...errors(400, 409, 413) },
    },
  },
  '/login': {
    post: {
      summary: 'Open a session',
      description: 'Attempts are limited per email and per client address (LOGIN_MAX_ATTEMPTS per LOGIN_WINDOW_S); past the limit, 429 with retry-after.',
      security: [],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          properties: { email: { type: 'string', format: 'email', maxLength: LIMITS.email }, password: { type: 'string', minLength: 1, maxLength: LIMITS.passwordMax } },
          required: ['email', 'password'],
        }),
      },
      responses: { '200': ok('Signed in', session), ...errors(400, 401, 413, 429) },
    },
  },
  '/logout': {
    post: { summary: 'End this session', responses: { '204': { description: 'Signed out' }, ...errors(401) } },
  },
  '/logout-all': {
    post: { summary: 'End every session of the account, this one included', responses: { '204': { description: 'Signed out everywhere' }, ...errors(401) } },
  },
  '/password': {
    post: {
      summary: 'Change the password',
      description: 'Needs the current password (wrong_password, param current_password, otherwise; attempts limited like logins). Ends every other session of the account and every outstanding emailed link.',
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          properties: { current_password: { type: 'string', minLength: 1, maxLength: LIMITS.passwordMax }, new_password: { type: 'string', minLength: LIMITS.passwordMin, maxLength: LIMITS.passwordMax } },
          required: ['current_password', 'new_password'],
        }),
      },
      responses: { '204': { description: 'Changed' }, ...errors(400, 401, 413, 429) },
    },
  },
  '/password-reset': {
    post: {
      summary: 'Mail a password reset link',
      description: 'Answers the same whether or not the email has an account; only an account that is set up gets the mail. The link is {PUBLIC_URL}/reset?token=…, valid one hour, single use.',
      security: [],
      requestBody: emailBody,
      responses: { '202': ok('Accepted', { type: 'object', properties: { status: { const: 'reset_sent' } }, required: ['status'] }), ...errors(400, 413, 429) },
    },
  },
  '/password-reset/confirm': {
    post: {
      summary: 'Set a new password from a reset link; ends every session and opens a new one',
      security: [],
      requestBody: linkPasswordBody,
      responses: { '200': ok('Password set, signed in', session), ...errors(400, 413) },
    },
  },
};
