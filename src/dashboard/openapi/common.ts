// Pieces shared by the parts of the dashboard's OpenAPI document (../openapi.ts). Request and
// answer schemas are derived from the valibot schemas that validate the requests (../schemas.ts)
// and type the answers (../shapes/), so the document cannot drift from what the handlers accept
// and send; parameters of query strings are written here, as their schemas parse text.

import type * as v from 'valibot';
import { toJsonSchema } from '../../server/json-schema.js';
import { LIMITS, RANGES } from '../schemas.js';
import { Key } from '../shapes/keys.js';
import { Deposit, DepositDetail, DepositMethod } from '../shapes/money.js';
import { UsageRecord } from '../shapes/usage.js';

/** Shapes documented once under components.schemas and referred to by name wherever they appear. */
const NAMED = new Map<v.GenericSchema, string>([
  [Key, 'Key'],
  [UsageRecord, 'UsageRecord'],
  [Deposit, 'Deposit'],
  [DepositDetail, 'DepositDetail'],
  [DepositMethod, 'DepositMethod'],
]);

export const namedSchemas = () =>
  Object.fromEntries([...NAMED].map(([schema, name]) => [name, toJsonSchema(schema, NAMED)]));
export const schemaOf = (schema: v.GenericSchema) => toJsonSchema(schema, NAMED);

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: object) => ({ 'application/json': { schema } });
/** A request body validated by `schema`. */
export const body = (schema: v.GenericSchema, required = true) => ({ required, content: json(schemaOf(schema)) });
/** An answer of `schema`'s shape. */
export const ok = (description: string, schema: v.GenericSchema) => ({ description, content: json(schemaOf(schema)) });

export const errors = (...statuses: number[]) => ({
  ...Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }])),
  default: { $ref: '#/components/responses/Unexpected' },
});

export const rangeParams = [
  {
    name: 'range',
    in: 'query',
    schema: { type: 'string', enum: Object.keys(RANGES) },
    description: 'A window ending now. Not combinable with from/to.',
  },
  {
    name: 'from',
    in: 'query',
    schema: { type: 'string', maxLength: LIMITS.date },
    description: 'ISO-8601 date or instant, inclusive. A date or a time without offset is UTC.',
    examples: ['2025-01-01', '2025-01-01T12:00:00+07:00'],
  },
  {
    name: 'to',
    in: 'query',
    schema: { type: 'string', maxLength: LIMITS.date },
    description: 'ISO-8601 date or instant, exclusive. Must not be before from.',
  },
];
export const pageParams = [
  {
    name: 'limit',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: LIMITS.pageMax, default: LIMITS.pageDefault },
  },
  {
    name: 'cursor',
    in: 'query',
    schema: { type: 'string', maxLength: LIMITS.cursor },
    description: 'next_cursor of the previous page, unchanged.',
  },
];
