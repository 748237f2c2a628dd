// The rules a request's field can break, for the API error envelope's `reason` and `params`
// (src/dashboard/error-codes.ts has the rest of its vocabulary), and the refusals worded with
// one: a rule whose valibot issue does not say which rule it was (a check, a transform, a
// picklist) is registered under its message by `rule`, and the dashboard's schema runner
// (src/dashboard/schemas/parse.ts) finds it there. Below the dashboard, so that what defines a
// request body of its own (a payment provider's deposit body) words its refusals the same way.
// No imports: the web app's type check reads it through error-codes.ts.

/**
 * `error.reason`, with invalid_request, invalid_range and invalid_cursor: which rule the field
 * named by `error.param` broke. `error.params` carries the rule's figures (`min`, `max`,
 * `allowed`), so a client can say it in its own words.
 */
export const FIELD_REASONS = [
  'required',
  'invalid_type',
  'too_short',
  'too_long',
  'invalid_email',
  'invalid_format',
  'too_small',
  'too_large',
  'not_integer',
  'not_allowed',
  'control_characters',
  'invalid_amount',
  'period_required',
  'period_without_cap',
  'invalid_date',
  'mixed_range',
  'disordered_range',
  'repeated',
  'invalid_cursor',
] as const;
export type FieldReason = (typeof FIELD_REASONS)[number];

export type ErrorParams = Record<string, string | number | string[]>;

const RULES = new Map<string, { reason: FieldReason; params?: ErrorParams }>();

/** `message`, registered as breaking the rule `reason` with its figures. */
export const rule = (reason: FieldReason, message: string, params?: ErrorParams) => {
  RULES.set(message, { reason, params });
  return message;
};

/** The rule a refusal's message was registered with, if any. */
export const ruleOf = (message: string) => RULES.get(message);
