// The hot store's Lua scripts (./lua/*.lua), read from the checkout once, when hot-redis.ts loads: each
// file is one piece (a helper such as sweep.lua, or an operation's body), and a script is its
// pieces in order. `$NAME` in a piece is replaced by the constant given for it, so a number or
// name the TypeScript side also uses is written once.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths.js';

const DIR = path.join(ROOT, 'src', 'store', 'lua');

export function luaScript(pieces: readonly string[], constants: Record<string, string | number> = {}): string {
  let text = pieces.map((name) => readFileSync(path.join(DIR, `${name}.lua`), 'utf8')).join('');
  for (const [name, value] of Object.entries(constants)) text = text.replaceAll(`$${name}`, String(value));
  const left = /\$[A-Z_]+/.exec(text);
  if (left) throw new Error(`Lua script ${pieces.join('+')}: no value for ${left[0]}`);
  return text;
}
