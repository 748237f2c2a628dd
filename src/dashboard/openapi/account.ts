// The dashboard's OpenAPI document: signup, sessions and passwords.

import {
  ChangePasswordBody,
  LoginBody,
  RegisterBody,
  ResetConfirmBody,
  ResetRequestBody,
  VerifyBody,
} from '../schemas.js';
import { ResetSent, Session, VerificationSent } from '../shapes/account.js';
import { body, errors, ok } from './common.js';

export const accountPaths = {
  '/register': {
    post: {
      summary: 'Start signup: mails a verification link',
      description:
        'Answers the same whether or not the email has an account. The link is {PUBLIC_URL}/verify?token=…, valid 24 hours, single use.',
      security: [],
      requestBody: body(RegisterBody),
      responses: { '202': ok('Accepted', VerificationSent), ...errors(400, 413, 429) },
    },
  },
  '/verify': {
    post: {
      summary: 'Complete signup: set the password and open a session',
      security: [],
      requestBody: body(VerifyBody),
      responses: { '200': ok('Signed up and signed in', Session), ...errors(400, 409, 413) },
    },
  },
  '/login': {
    post: {
      summary: 'Open a session',
      description:
        'Attempts are limited per email and per client address (LOGIN_MAX_ATTEMPTS per LOGIN_WINDOW_S); past the limit, 429 with retry-after.',
      security: [],
      requestBody: body(LoginBody),
      responses: { '200': ok('Signed in', Session), ...errors(400, 401, 413, 429) },
    },
  },
  '/logout': {
    post: { summary: 'End this session', responses: { '204': { description: 'Signed out' }, ...errors(401) } },
  },
  '/logout-all': {
    post: {
      summary: 'End every session of the account, this one included',
      responses: { '204': { description: 'Signed out everywhere' }, ...errors(401) },
    },
  },
  '/password': {
    post: {
      summary: 'Change the password',
      description:
        'Needs the current password (wrong_password, param current_password, otherwise; attempts limited like logins). Ends every other session of the account and every outstanding emailed link.',
      requestBody: body(ChangePasswordBody),
      responses: { '204': { description: 'Changed' }, ...errors(400, 401, 413, 429) },
    },
  },
  '/password-reset': {
    post: {
      summary: 'Mail a password reset link',
      description:
        'Answers the same whether or not the email has an account; only an account that is set up gets the mail. The link is {PUBLIC_URL}/reset?token=…, valid one hour, single use.',
      security: [],
      requestBody: body(ResetRequestBody),
      responses: { '202': ok('Accepted', ResetSent), ...errors(400, 413, 429) },
    },
  },
  '/password-reset/confirm': {
    post: {
      summary: 'Set a new password from a reset link; ends every session and opens a new one',
      security: [],
      requestBody: body(ResetConfirmBody),
      responses: { '200': ok('Password set, signed in', Session), ...errors(400, 413) },
    },
  },
};
