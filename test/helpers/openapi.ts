// A small JSON Schema subset checker (type, const, enum, pattern, required, properties with no
// undocumented extras, items, $ref) for checking live answers against the OpenAPI document.

type Schema = Record<string, any>;

export function check(doc: any, schema: Schema, value: unknown, path: string, errors: string[]): void {
  if (schema.$ref) return check(doc, doc.components.schemas[schema.$ref.split('/').pop()], value, path, errors);
  if ('const' in schema && value !== schema.const) errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  const types: string[] | undefined = schema.type ? [].concat(schema.type) : undefined;
  if (types) {
    const actual =
      value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
    const ok = types.includes(actual) || (actual === 'integer' && types.includes('number'));
    if (!ok) return void errors.push(`${path}: ${actual} is not ${types.join('|')}`);
  }
  if (typeof value === 'string' && schema.pattern && !new RegExp(schema.pattern).test(value))
    errors.push(`${path}: "${value}" does not match ${schema.pattern}`);
  if (typeof value === 'string' && schema.format === 'date-time' && Number.isNaN(Date.parse(value)))
    errors.push(`${path}: not a date-time`);
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => check(doc, schema.items, v, `${path}[${i}]`, errors));
  if (value && typeof value === 'object' && !Array.isArray(value) && schema.properties) {
    for (const r of schema.required ?? []) if (!(r in value)) errors.push(`${path}.${r}: required but missing`);
    for (const [k, v] of Object.entries(value)) {
      if (!(k in schema.properties)) errors.push(`${path}.${k}: not documented`);
      else check(doc, schema.properties[k], v, `${path}.${k}`, errors);
    }
  }
}

/** What is wrong with a live answer to `method path` by the document: [] when it fits. */
export function answerErrors(doc: any, path: string, method: string, r: { status: number; json: unknown }): string[] {
  const spec = doc.paths[path]?.[method]?.responses?.[String(r.status)];
  if (!spec) return [`${method} ${path}: status ${r.status} is not documented`];
  const resolved = spec.$ref ? doc.components.responses[spec.$ref.split('/').pop()] : spec;
  const errors: string[] = [];
  check(doc, resolved.content['application/json'].schema, r.json, `${method} ${path} ${r.status}`, errors);
  return errors;
}
