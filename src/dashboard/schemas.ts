// Every dashboard body and query string goes through one of these schemas, one file per area in
// ./schemas/ (their answers' shapes are in ./shapes/), gathered here. Lengths are capped before
// any pattern runs, so a megabyte of input costs a length check, not a regex.

export { LIMITS, parseInstant, RANGES, Uuid, type RangeName, type TimeRange } from './schemas/common.js';
export { issueDetail, parseBody, parseQuery, rule } from './schemas/parse.js';
export * from './schemas/account.js';
export * from './schemas/keys.js';
export * from './schemas/usage.js';
export * from './schemas/money.js';
