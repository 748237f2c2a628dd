// Every dashboard body and query string goes through one of these schemas. Lengths are capped
// before any pattern runs, so a megabyte of input costs a length check, not a regex.

import * as v from 'valibot';
import { badRequest, type ErrorDetail } from './errors.js';
import type { ErrorParams, FieldReason } from './error-codes.js';
import { decodeCursor, type Cursor, type CursorKind } from './cursor.js';
import type { KeyChanges } from '../accounts/keys.js';
import { SPEND_PERIODS, type SpendPeriod as SpendPeriodName } from '../billing/key-limits.js';
import { NANO_PER_USD, usdToNano } from '../billing/money.js';

export const LIMITS = {
  email: 254,
  passwordMin: 8,
  passwordMax: 1024,
  name: 100,
  token: 256,
  model: 200,
  date: 64,
  cursor: 256,
  pageMax: 500,
  pageDefault: 50,
} as const;

/**
 * Rules whose valibot issue type does not say which rule it was (checks, transforms, picklists):
 * their message names the reason and figures a client words the refusal from.
 */
const RULES = new Map<string, { reason: FieldReason; params?: ErrorParams }>();
export const rule = (reason: FieldReason, message: string, params?: ErrorParams) => {
  RULES.set(message, { reason, params });
  return message;
};

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

const KeyName = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(LIMITS.name, `must be at most ${LIMITS.name} characters`),
  // eslint-disable-next-line no-control-regex
  v.regex(/^[^\u0000-\u001f\u007f]*$/, rule('control_characters', 'must not contain control characters')),
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
// ---- key limits ----

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

export const Uuid = v.pipe(v.string(), v.maxLength(36), v.uuid());

// ---- query strings ----------------------------------------------------------------------

export const RANGES = {
  '24h': 24 * 3600_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
} as const;
export type RangeName = keyof typeof RANGES;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * An ISO-8601 date or instant. A date alone is midnight UTC, and so is a time without an
 * offset: a server-side "local time" would depend on where the gateway runs.
 */
export function parseInstant(text: string): Date | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCDate() !== day || calendar.getUTCMonth() !== month - 1) return null;
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const zm = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone)!;
    const oh = Number(zm[2]),
      om = Number(zm[3] ?? '0');
    if (oh > 14 || om > 59) return null;
    offsetMin = (zm[1] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0;
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMin * 60_000;
  const date = new Date(t);
  if (year < 1970 || Number.isNaN(date.getTime())) return null;
  return date;
}

const Instant = v.pipe(
  v.string(),
  v.maxLength(LIMITS.date, 'is too long to be a date'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const date = parseInstant(dataset.value);
    if (!date) {
      addIssue({
        message: rule('invalid_date', 'must be an ISO-8601 date or instant, e.g. 2025-01-31 or 2025-01-31T12:00:00Z'),
      });
      return NEVER;
    }
    return date;
  }),
);

const RangeEntries = {
  from: v.optional(Instant),
  to: v.optional(Instant),
  range: v.optional(
    v.picklist(
      Object.keys(RANGES) as RangeName[],
      rule('not_allowed', `must be one of ${Object.keys(RANGES).join(', ')}`, { allowed: Object.keys(RANGES) }),
    ),
  ),
};

const Limit = v.pipe(
  v.string(),
  v.regex(
    /^\d{1,4}$/,
    rule('not_integer', `must be a whole number from 1 to ${LIMITS.pageMax}`, { min: 1, max: LIMITS.pageMax }),
  ),
  v.transform(Number),
  v.minValue(1, `must be at least 1`),
  v.maxValue(LIMITS.pageMax, `must be at most ${LIMITS.pageMax}`),
);

const CursorParam = (kind: CursorKind) =>
  v.pipe(
    v.string(),
    v.maxLength(LIMITS.cursor, 'is not a cursor from this list'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const c = decodeCursor(kind, dataset.value);
      if (!c) {
        addIssue({
          message: rule('invalid_cursor', 'is not a cursor from this list (pass its next_cursor back unchanged)'),
        });
        return NEVER;
      }
      return c;
    }),
  );

export interface TimeRange {
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
}

function resolveRange(q: { from?: Date; to?: Date; range?: RangeName }): TimeRange {
  if (q.range) return { from: new Date(Date.now() - RANGES[q.range]) };
  return { from: q.from, to: q.to };
}

type RangeInput = { from?: Date; to?: Date; range?: RangeName };
const notMixed = (q: RangeInput) => !(q.range && (q.from || q.to));
const ordered = (q: RangeInput) => !(q.from && q.to && q.from.getTime() > q.to.getTime());
const MIXED = rule('mixed_range', 'Give either "range" or "from"/"to", not both');
const DISORDERED = rule('disordered_range', '"from" must not be after "to"');

export const StatsQuery = v.pipe(
  v.object(RangeEntries),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => resolveRange(q)),
);

/**
 * `ok` (2xx), `error` (anything else: refused, failed, cut short), `refused` (refused or failed
 * before any answer, at $0: the refusal log) or one status code.
 */
const StatusFilter = v.pipe(
  v.string(),
  v.regex(
    /^(ok|error|refused|[1-5]\d\d)$/,
    rule('not_allowed', 'must be ok, error, refused or a status code such as 429', {
      allowed: ['ok', 'error', 'refused', '100–599'],
    }),
  ),
  v.transform((s): UsageStatus => (s === 'ok' || s === 'error' || s === 'refused' ? s : Number(s))),
);
export type UsageStatus = 'ok' | 'error' | 'refused' | number;

const UsageFilterEntries = {
  ...RangeEntries,
  model: v.optional(
    v.pipe(
      v.string(),
      v.nonEmpty('must not be empty'),
      v.maxLength(LIMITS.model, `must be at most ${LIMITS.model} characters`),
    ),
  ),
  key_id: v.optional(v.pipe(v.string(), v.maxLength(36, 'must be a key id'), v.uuid('must be a key id'))),
  status: v.optional(StatusFilter),
};
type UsageFilterInput = RangeInput & { model?: string; key_id?: string; status?: UsageStatus };
const usageFilter = (q: UsageFilterInput) => ({
  ...resolveRange(q),
  model: q.model,
  keyId: q.key_id?.toLowerCase(),
  status: q.status,
});
export type UsageFilter = ReturnType<typeof usageFilter>;

export const UsageQuery = v.pipe(
  v.object({
    ...UsageFilterEntries,
    limit: v.optional(Limit, String(LIMITS.pageDefault)),
    cursor: v.optional(CursorParam('usage')),
  }),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => ({ ...usageFilter(q), limit: q.limit, cursor: q.cursor as Cursor | undefined })),
);

export const UsageExportQuery = v.pipe(
  v.object(UsageFilterEntries),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => usageFilter(q)),
);

export const DepositsQuery = v.pipe(
  v.object({
    ...RangeEntries,
    limit: v.optional(Limit, String(LIMITS.pageDefault)),
    cursor: v.optional(CursorParam('deposits')),
  }),
  v.check((q) => notMixed(q), MIXED),
  v.check((q) => ordered(q), DISORDERED),
  v.transform((q) => ({ ...resolveRange(q), limit: q.limit, cursor: q.cursor as Cursor | undefined })),
);

// ---- running them ------------------------------------------------------------------------

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String((p as { key: unknown }).key)).join('.');
}

function describe(issue: v.BaseIssue<unknown>, where: 'body' | 'query'): string {
  const path = issuePath(issue);
  if (!path) return where === 'body' ? `The request body ${issue.message}.` : `${issue.message}.`;
  const field = where === 'body' ? `"${path}"` : `Query parameter "${path}"`;
  if (issue.kind === 'schema' && issue.input === undefined) return `${field} is required.`;
  return `${field} ${issue.message}.`;
}

/** Which rule a field broke, with its figures: valibot's issue type, or the rule's own entry. */
const BY_TYPE: Record<string, FieldReason> = {
  min_length: 'too_short',
  max_length: 'too_long',
  non_empty: 'required',
  email: 'invalid_email',
  regex: 'invalid_format',
  uuid: 'invalid_format',
  min_value: 'too_small',
  max_value: 'too_large',
  safe_integer: 'not_integer',
  integer: 'not_integer',
};
const FIGURE: Partial<Record<FieldReason, string>> = {
  too_short: 'min',
  too_small: 'min',
  too_long: 'max',
  too_large: 'max',
};

export function issueDetail(issue: v.BaseIssue<unknown>): ErrorDetail {
  const path = issuePath(issue);
  const param = path ? { param: path } : {};
  const own = RULES.get(issue.message);
  if (own) return { ...param, reason: own.reason, ...(own.params ? { params: own.params } : {}) };
  if (issue.kind === 'schema') return { ...param, reason: issue.input === undefined ? 'required' : 'invalid_type' };
  const reason = BY_TYPE[issue.type] ?? 'invalid_format';
  const figure = FIGURE[reason];
  const requirement = (issue as { requirement?: unknown }).requirement;
  return {
    ...param,
    reason,
    ...(figure && typeof requirement === 'number' ? { params: { [figure]: requirement } } : {}),
  };
}

export function parseBody<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, body);
  if (!r.success) throw badRequest('invalid_request', describe(r.issues[0], 'body'), issueDetail(r.issues[0]));
  return r.output;
}

/**
 * Query strings arrive as text; a parameter given twice is refused rather than guessing which
 * one was meant. Unknown parameters are ignored, as the vendors' APIs do.
 */
export function parseQuery<S extends v.GenericSchema>(schema: S, query: URLSearchParams): v.InferOutput<S> {
  const obj: Record<string, string> = {};
  for (const [k, value] of query) {
    if (Object.hasOwn(obj, k))
      throw badRequest('invalid_request', `Query parameter "${k}" is given more than once.`, {
        param: k.slice(0, 50),
        reason: 'repeated',
      });
    obj[k] = value;
  }
  const r = v.safeParse(schema, obj);
  if (!r.success) {
    const issue = r.issues[0];
    const code =
      issuePath(issue) === 'cursor'
        ? 'invalid_cursor'
        : ['from', 'to', 'range', ''].includes(issuePath(issue))
          ? 'invalid_range'
          : 'invalid_request';
    throw badRequest(code, describe(issue, 'query'), issueDetail(issue));
  }
  return r.output;
}
