// The shapes an environment variable's value can take, shared by src/config.ts and the payment
// providers (each declares its own variables, src/payments/provider.ts). Every message names
// the variable, so a bad value stops start-up with one line saying which and why.

import * as v from 'valibot';

/** A variable's schema: the text from the environment (undefined when unset) to its value. */
export type EnvSchema = v.GenericSchema<string | undefined, unknown>;

/** One variable: its schema, the one-line documentation (the table in docs/api.md), and whether it is a secret never echoed in an error. */
export interface EnvVar {
  schema: EnvSchema;
  doc: string;
  secret?: boolean;
}

export const int = (name: string, def: number, min: number, max: number) =>
  v.pipe(
    v.optional(v.string(), String(def)),
    v.trim(),
    v.regex(/^\d+$/, `${name} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

export const url = (name: string, protocols: string[]) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check(
        (s) => {
          try {
            return protocols.includes(new URL(s).protocol);
          } catch {
            return false;
          }
        },
        `${name} must be a URL starting with ${protocols.map((p) => p + '//').join(' or ')}`,
      ),
    ),
  );

/** Decimal text (no sign, no exponent): rates, fees and USD limits. Kept as text; src/payments parses it exactly. */
export const decimal = (name: string, def: string | undefined, maxDecimals: number, example: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(
        new RegExp(`^\\d{1,15}(\\.\\d{1,${maxDecimals}})?$`),
        `${name} must be a decimal number with at most ${maxDecimals} decimals, e.g. ${example}`,
      ),
    ),
    def,
  );

/** A secret: never echoed back in an error (see EnvVar.secret). */
export const secret = (name: string, minLength: number) =>
  v.optional(v.pipe(v.string(), v.trim(), v.minLength(minLength, `${name} must be at least ${minLength} characters`)));

export const flag = (name: string) =>
  v.pipe(
    v.optional(v.picklist(['true', 'false'], `${name} must be true or false`), 'false'),
    v.transform((s) => s === 'true'),
  );
