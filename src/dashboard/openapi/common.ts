// Pieces shared by the parts of the dashboard's OpenAPI document (../openapi.ts).

import type * as v from 'valibot';
import { toJsonSchema } from '../../admin/json-schema.js';
import { LIMITS, RANGES } from '../schemas.js';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const money = (description: string) => ({ type: 'string', pattern: '^-?\\d+\\.\\d{9}$', description: `${description} (USD, decimal string, 9 decimals)`, examples: ['12.345678901'] });
export const instant = (description: string) => ({ type: 'string', format: 'date-time', description });
export const nullableInstant = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description });
export const int = (description: string) => ({ type: 'integer', minimum: 0, description });
export const json = (schema: object) => ({ 'application/json': { schema } });
export const ok = (description: string, schema: object) => ({ description, content: json(schema) });
/** A shape validated by valibot (src/admin/shapes.ts), described from the same schema. */
export const shape = (schema: v.GenericSchema) => toJsonSchema(schema);

export const errors = (...statuses: number[]) => ({
  ...Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/E${s}` }])),
  default: { $ref: '#/components/responses/Unexpected' },
});

export const rangeParams = [
  { name: 'range', in: 'query', schema: { type: 'string', enum: Object.keys(RANGES) }, description: 'A window ending now. Not combinable with from/to.' },
  { name: 'from', in: 'query', schema: { type: 'string', maxLength: LIMITS.date }, description: 'ISO-8601 date or instant, inclusive. A date or a time without offset is UTC.', examples: ['2025-01-01', '2025-01-01T12:00:00+07:00'] },
  { name: 'to', in: 'query', schema: { type: 'string', maxLength: LIMITS.date }, description: 'ISO-8601 date or instant, exclusive. Must not be before from.' },
];
export const pageParams = [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: LIMITS.pageMax, default: LIMITS.pageDefault } },
  { name: 'cursor', in: 'query', schema: { type: 'string', maxLength: LIMITS.cursor }, description: 'next_cursor of the previous page, unchanged.' },
];

