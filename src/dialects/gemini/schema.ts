// Function parameters: `parametersJsonSchema` is JSON Schema already; `parameters` is Gemini's
// OpenAPI subset (uppercase types, `nullable`, int64 bounds written as strings), turned into the
// JSON Schema the IR and every other vendor take.

import { isRecord } from '../openai/shared.js';

const INT_FIELDS = new Set(['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties']);
/** Gemini-only annotations with no JSON Schema meaning. */
const DROPPED = new Set(['propertyOrdering', 'nullable']);

export function openApiToJsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(openApiToJsonSchema);
  if (!isRecord(s)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (DROPPED.has(k)) continue;
    if (k === 'type' && typeof v === 'string') out.type = v === 'TYPE_UNSPECIFIED' ? undefined : v.toLowerCase();
    else if (k === 'properties' && isRecord(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, openApiToJsonSchema(ps)]));
    else if ((k === 'items' || k === 'anyOf' || k === 'not' || k === 'additionalProperties') && typeof v === 'object')
      out[k] = openApiToJsonSchema(v);
    else if (INT_FIELDS.has(k) && typeof v === 'string' && /^\d+$/.test(v)) out[k] = Number(v);
    else out[k] = v;
  }
  if (out.type === undefined) delete out.type;
  // `nullable: true` is JSON Schema's type union with null.
  if (s.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}
