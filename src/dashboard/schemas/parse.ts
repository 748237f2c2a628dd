// Running the dashboard's schemas (./account.ts and the others beside it; the admin API's
// too): a body or a query string through one, and a broken rule into the error envelope's
// param, reason and figures, from which a client words the refusal.

import * as v from 'valibot';
import { ruleOf } from '../../field-rules.js';
import { badRequest, type ErrorDetail } from '../errors.js';
import type { FieldReason } from '../error-codes.js';

/**
 * Rules whose valibot issue type does not say which rule it was (checks, transforms, picklists)
 * are worded with `rule`: their message names the reason and figures a client words the refusal
 * from.
 */
export { rule } from '../../field-rules.js';

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
  const own = ruleOf(issue.message);
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
