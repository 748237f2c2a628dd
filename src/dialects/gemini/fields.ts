// Gemini's JSON names are camelCase, and the API takes the snake_case spelling as well (rig sends
// `output_dimensionality`, the Python SDK's users `generation_config`). The gateway reads either,
// field by field; values that are the client's own data (function arguments, schemas' property
// names) are never renamed.

import { isRecord } from '../openai/shared.js';

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `o[name]`, or its snake_case spelling. */
export function field(o: unknown, name: string): unknown {
  if (!isRecord(o)) return undefined;
  const v = o[name];
  return v !== undefined ? v : o[snake(name)];
}

/** The key under which `o` holds `name` (camel or snake), or the camel name when it holds neither. */
export function keyOf(o: Record<string, unknown>, name: string): string {
  return name in o ? name : snake(name) in o ? snake(name) : name;
}

export const record = (v: unknown): Record<string, unknown> | undefined => (isRecord(v) ? v : undefined);
