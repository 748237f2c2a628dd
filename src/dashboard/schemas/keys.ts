// The dashboard's bodies for service keys and their limits (their answers are in
// ../shapes/keys.ts).

import * as v from 'valibot';
import type { KeyChanges } from '../../accounts/keys.js';
import { SPEND_PERIODS, type SpendPeriod as SpendPeriodName } from '../../billing/key-limits.js';
import { NANO_PER_USD, usdToNano } from '../../billing/money.js';
import { LIMITS } from './common.js';
import { rule } from './parse.js';

const KeyName = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(LIMITS.name, `must be at most ${LIMITS.name} characters`),
  // eslint-disable-next-line no-control-regex
  v.regex(/^[^\u0000-\u001f\u007f]*$/, rule('control_characters', 'must not contain control characters')),
);

/** The api_keys.rpm_limit column is a Postgres integer. */
const MAX_RPM = 2_147_483_647;
/** A cap no account reaches, well inside the bigint column. */
const MAX_SPEND_USD = 1_000_000_000;

const RpmLimit = v.nullable(
  v.pipe(
    v.number('must be a whole number of requests per minute, or null'),
    v.safeInteger('must be a whole number of requests per minute, or null'),
    v.minValue(1, 'must be at least 1 (null removes the limit)'),
    v.maxValue(MAX_RPM, `must be at most ${MAX_RPM}`),
    v.description('Requests per minute; null removes the limit'),
  ),
);
const SpendLimitUsd = v.nullable(
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.trim(), v.maxLength(32))], 'must be a USD amount, or null'),
    v.description(
      'Spend cap in USD (more than 0, at most 9 decimals); null removes the cap. Needs spend_limit_period.',
    ),
    // What the transform checks, stated for the OpenAPI document.
    v.metadata({
      jsonSchema: {
        oneOf: [
          { type: 'string', pattern: '^\\d+(\\.\\d{1,9})?$' },
          { type: 'number', exclusiveMinimum: 0 },
        ],
      },
    }),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      let nano: bigint;
      try {
        nano = usdToNano(dataset.value);
      } catch {
        addIssue({
          message: rule('invalid_amount', 'must be a USD amount with at most 9 decimals, e.g. 25 or "0.50"', {
            max: MAX_SPEND_USD,
            decimals: 9,
          }),
        });
        return NEVER;
      }
      if (nano <= 0n || nano > BigInt(MAX_SPEND_USD) * NANO_PER_USD) {
        addIssue({
          message: rule('invalid_amount', `must be more than 0 and at most ${MAX_SPEND_USD} (null removes the limit)`, {
            max: MAX_SPEND_USD,
            decimals: 9,
          }),
        });
        return NEVER;
      }
      return nano;
    }),
  ),
);
const SpendPeriod = v.picklist(
  SPEND_PERIODS,
  rule('not_allowed', `must be one of ${SPEND_PERIODS.join(', ')}`, { allowed: [...SPEND_PERIODS] }),
);
const LimitEntries = {
  rpm_limit: v.optional(RpmLimit),
  spend_limit_usd: v.optional(SpendLimitUsd),
  spend_limit_period: v.optional(
    v.pipe(SpendPeriod, v.description('Required with a spend_limit_usd amount, and only with one')),
  ),
};
type LimitInput = { rpm_limit?: number | null; spend_limit_usd?: bigint | null; spend_limit_period?: SpendPeriodName };

/** A cap needs its period, and a period means nothing without a cap in the same body. */
const periodGiven = (b: LimitInput) => !(typeof b.spend_limit_usd === 'bigint' && b.spend_limit_period === undefined);
const PERIOD_MISSING = rule('period_required', 'is required with spend_limit_usd (day, week, month or total)');
const capGiven = (b: LimitInput) => !(b.spend_limit_period !== undefined && typeof b.spend_limit_usd !== 'bigint');
const CAP_MISSING = rule('period_without_cap', 'is given only together with a spend_limit_usd amount');

/** The limits of a parsed body as key changes: absent stays, null removes. */
function limitChanges(b: LimitInput): Omit<KeyChanges, 'name'> {
  const out: Omit<KeyChanges, 'name'> = {};
  if (b.rpm_limit !== undefined) out.rpm = b.rpm_limit;
  if (b.spend_limit_usd !== undefined)
    out.spend = b.spend_limit_usd === null ? null : { nano: b.spend_limit_usd, period: b.spend_limit_period! };
  return out;
}

export const CreateKeyBody = v.pipe(
  v.object({ name: v.optional(v.nullable(KeyName)), ...LimitEntries }, 'must be a JSON object'),
  v.forward(
    v.check((b) => periodGiven(b), PERIOD_MISSING),
    ['spend_limit_period'],
  ),
  v.forward(
    v.check((b) => capGiven(b), CAP_MISSING),
    ['spend_limit_period'],
  ),
  v.transform((b) => ({ name: b.name ?? '', limits: limitChanges(b) })),
);
export const UpdateKeyBody = v.pipe(
  v.object({ name: v.optional(KeyName), ...LimitEntries }, 'must be a JSON object'),
  v.forward(
    v.check((b) => periodGiven(b), PERIOD_MISSING),
    ['spend_limit_period'],
  ),
  v.forward(
    v.check((b) => capGiven(b), CAP_MISSING),
    ['spend_limit_period'],
  ),
  v.transform((b): KeyChanges => ({ ...(b.name !== undefined ? { name: b.name } : {}), ...limitChanges(b) })),
);
