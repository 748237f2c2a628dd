// The dashboard's bodies for signup, sessions and passwords (their answers are in
// ../shapes/account.ts).

import * as v from 'valibot';
import { LIMITS } from './common.js';

const Email = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.nonEmpty('must not be empty'),
  v.maxLength(LIMITS.email, `must be at most ${LIMITS.email} characters`),
  v.email('must be an email address'),
  v.toLowerCase(),
);

const NewPassword = v.pipe(
  v.string('must be a string'),
  v.minLength(LIMITS.passwordMin, `must be at least ${LIMITS.passwordMin} characters`),
  v.maxLength(LIMITS.passwordMax, `must be at most ${LIMITS.passwordMax} characters`),
);

// A login is judged by the password check, not by the rules for choosing one: a short guess
// is simply wrong (and counts as a failed attempt), only an absurd one is refused up front.
const AnyPassword = v.pipe(
  v.string('must be a string'),
  v.nonEmpty('must not be empty'),
  v.maxLength(LIMITS.passwordMax, `must be at most ${LIMITS.passwordMax} characters`),
);

const EmailToken = v.pipe(
  v.string('must be a string'),
  v.nonEmpty('must not be empty'),
  v.maxLength(LIMITS.token, `must be at most ${LIMITS.token} characters`),
  v.regex(/^[A-Za-z0-9_-]+$/, 'is not a verification token'),
  v.description('The token from the mailed link'),
);

export const RegisterBody = v.object({ email: Email }, 'must be a JSON object');
export const VerifyBody = v.object({ token: EmailToken, password: NewPassword }, 'must be a JSON object');
export const LoginBody = v.object({ email: Email, password: AnyPassword }, 'must be a JSON object');
export const ChangePasswordBody = v.object(
  { current_password: AnyPassword, new_password: NewPassword },
  'must be a JSON object',
);
export const ResetRequestBody = v.object({ email: Email }, 'must be a JSON object');
export const ResetConfirmBody = v.object({ token: EmailToken, password: NewPassword }, 'must be a JSON object');
