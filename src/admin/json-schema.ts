// JSON Schema from the valibot schemas that validate the admin API, so that its OpenAPI document
// (./openapi.ts) and its validation are one source and cannot disagree. Covers the parts of
// valibot that src/admin/shapes.ts uses; anything else is a programming error, thrown at start.

import type * as v from 'valibot';

type Any = v.GenericSchema | v.GenericPipeItem;
type Json = Record<string, unknown>;

export function toJsonSchema(schema: v.GenericSchema): Json {
  const s = schema as unknown as { type: string; kind: string; pipe?: Any[]; entries?: Record<string, v.GenericSchema>; wrapped?: v.GenericSchema; options?: unknown[]; item?: v.GenericSchema; literal?: unknown; message?: string };
  if (s.pipe) {
    const [base, ...actions] = s.pipe as unknown as { type: string; kind: string; requirement?: unknown; message?: unknown }[];
    const out = toJsonSchema(base as unknown as v.GenericSchema);
    for (const a of actions) {
      if (a.kind !== 'validation') continue;
      if (a.type === 'max_length') out.maxLength = a.requirement;
      else if (a.type === 'min_length') out.minLength = a.requirement;
      else if (a.type === 'non_empty') out.minLength = 1;
      else if (a.type === 'min_value') out.minimum = a.requirement;
      else if (a.type === 'max_value') out.maximum = a.requirement;
      else if (a.type === 'integer' || a.type === 'safe_integer') out.type = 'integer';
      else if (a.type === 'regex') out.pattern = (a.requirement as RegExp).source;
      else if (a.type === 'email') out.format = 'email';
      else if (a.type === 'uuid') out.format = 'uuid';
      else if (a.type === 'iso_timestamp') out.format = 'date-time';
      else throw new Error(`toJsonSchema: validation ${a.type} is not described`);
      if (typeof a.message === 'string' && !out.description) out.description = a.message;
    }
    return out;
  }
  switch (s.type) {
    case 'string':
      return { type: 'string' };
    case 'unknown':
      return {};
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'literal':
      return { const: s.literal };
    case 'picklist':
      return { type: 'string', enum: s.options };
    case 'array':
      return { type: 'array', items: toJsonSchema(s.item!) };
    case 'nullable': {
      const inner = toJsonSchema(s.wrapped!);
      return typeof inner.type === 'string' ? { ...inner, type: [inner.type, 'null'] } : { oneOf: [inner, { type: 'null' }] };
    }
    case 'optional':
      return toJsonSchema(s.wrapped!);
    case 'union':
      return { oneOf: (s.options as v.GenericSchema[]).map(toJsonSchema) };
    case 'object': {
      const properties: Json = {};
      const required: string[] = [];
      for (const [k, e] of Object.entries(s.entries!)) {
        properties[k] = toJsonSchema(e);
        if ((e as { type: string }).type !== 'optional') required.push(k);
      }
      return { type: 'object', properties, required };
    }
    default:
      throw new Error(`toJsonSchema: schema ${s.type} is not described`);
  }
}
