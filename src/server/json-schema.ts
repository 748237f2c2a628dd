// JSON Schema from the valibot schemas of the HTTP APIs (src/admin/shapes/; for the dashboard,
// src/dashboard/schemas/ and src/dashboard/shapes/), so that an API's OpenAPI document, its
// validation and its answers' types are one source and cannot disagree. Covers the parts of valibot those schemas use; anything else is a
// programming error, thrown when the document is built at start.
//
// The document describes what a client sends and receives, so transformations (trim, lower
// case, a parsed amount) describe nothing; a rule checked inside a transform or across fields
// (check, forward) is stated in words, or for the document's sake with
// `v.metadata({ jsonSchema: {…} })`, merged into the field's schema.

import type * as v from 'valibot';

type Json = Record<string, unknown>;
type Part = {
  type: string;
  kind: string;
  pipe?: Part[];
  entries?: Record<string, Part>;
  wrapped?: Part;
  options?: unknown[];
  item?: Part;
  literal?: unknown;
  message?: unknown;
  requirement?: unknown;
  description?: string;
  examples?: unknown[];
  metadata?: { jsonSchema?: Json };
};

/** Schemas documented once under components.schemas, each referred to by its name wherever it appears. */
export type SchemaNames = ReadonlyMap<v.GenericSchema, string>;

const VALIDATIONS: Record<string, (out: Json, requirement: unknown) => void> = {
  max_length: (out, r) => void (out.maxLength = r),
  min_length: (out, r) => void (out.minLength = r),
  non_empty: (out) => void (out.minLength = 1),
  min_value: (out, r) => void (out.minimum = r),
  max_value: (out, r) => void (out.maximum = r),
  integer: (out) => void (out.type = 'integer'),
  safe_integer: (out) => void (out.type = 'integer'),
  regex: (out, r) => void (out.pattern = (r as RegExp).source),
  email: (out) => void (out.format = 'email'),
  uuid: (out) => void (out.format = 'uuid'),
  iso_timestamp: (out) => void (out.format = 'date-time'),
  // A rule across fields (v.check, v.forward): the operation's description says it.
  check: () => {},
};

/** `schema` as JSON Schema; a schema named in `names` (other than `schema` itself) becomes a $ref. */
export function toJsonSchema(schema: v.GenericSchema, names?: SchemaNames): Json {
  return describe(schema as unknown as Part, names, true);
}

function describe(s: Part, names: SchemaNames | undefined, root = false): Json {
  const name = root ? undefined : names?.get(s as unknown as v.GenericSchema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  if (s.pipe) {
    const [base, ...actions] = s.pipe;
    const out = describe(base, names);
    let transformed = false;
    for (const a of actions) {
      if (a.kind === 'metadata') {
        if (a.type === 'description') out.description = a.description;
        else if (a.type === 'examples') out.examples = a.examples;
        else if (a.type === 'metadata' && a.metadata?.jsonSchema) Object.assign(out, a.metadata.jsonSchema);
        else throw new Error(`toJsonSchema: metadata ${a.type} is not described`);
      } else if (a.kind === 'transformation') {
        // Past a transform, the rules that follow are about its output, not what was sent.
        if (a.type !== 'trim' && a.type !== 'to_lower_case') transformed = true;
      } else if (a.kind === 'validation') {
        if (transformed && a.type !== 'check')
          throw new Error(`toJsonSchema: validation ${a.type} after a transform is not described`);
        const apply = VALIDATIONS[a.type];
        if (!apply) throw new Error(`toJsonSchema: validation ${a.type} is not described`);
        apply(out, a.requirement);
        if (typeof a.message === 'string' && !out.description && a.type !== 'check') out.description = a.message;
      } else {
        throw new Error(`toJsonSchema: ${a.kind} ${a.type} is not described`);
      }
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
      return { type: 'array', items: describe(s.item!, names) };
    case 'nullable':
      return orNull(describe(s.wrapped!, names));
    case 'optional':
      return describe(s.wrapped!, names);
    case 'union':
      return { oneOf: (s.options as Part[]).map((o) => describe(o, names)) };
    case 'object': {
      const properties: Json = {};
      const required: string[] = [];
      for (const [k, e] of Object.entries(s.entries!)) {
        properties[k] = describe(e, names);
        if (e.type !== 'optional') required.push(k);
      }
      return { type: 'object', properties, required };
    }
    default:
      throw new Error(`toJsonSchema: schema ${s.type} is not described`);
  }
}

/** `inner`, or null: in the type list where there is one (and in its enum), else as one more alternative. */
function orNull(inner: Json): Json {
  if (Array.isArray(inner.oneOf) && inner.type === undefined)
    return { ...inner, oneOf: [...inner.oneOf, { type: 'null' }] };
  if (inner.$ref || 'const' in inner || inner.type === undefined) return { oneOf: [inner, { type: 'null' }] };
  const types = ([] as unknown[]).concat(inner.type);
  const out: Json = { ...inner, type: types.includes('null') ? types : [...types, 'null'] };
  if (Array.isArray(inner.enum) && !inner.enum.includes(null)) out.enum = [...inner.enum, null];
  return out;
}
