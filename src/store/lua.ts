// The hot store's Lua scripts (./lua/*.lua), read from the checkout once, when the Redis store's
// parts load (redis-accounts.ts, redis-outbox.ts, redis-cache.ts): each file is one piece (a
// helper such as sweep.lua, or an operation's body), and a script is its pieces in order. `$NAME`
// in a piece is replaced by the constant given for it, so a number or name the TypeScript side
// also uses is written once.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths.js';

const DIR = path.join(ROOT, 'src', 'store', 'lua');

/**
 * A script as ioredis defines it as a command of the connection. One without numberOfKeys is
 * given its key count with each call.
 */
export interface LuaCommand {
  lua: string;
  numberOfKeys?: number;
}

export function luaScript(pieces: readonly string[], constants: Record<string, string | number> = {}): string {
  let text = pieces.map((name) => readFileSync(path.join(DIR, `${name}.lua`), 'utf8')).join('');
  for (const [name, value] of Object.entries(constants)) text = text.replaceAll(`$${name}`, String(value));
  const left = /\$[A-Z_]+/.exec(text);
  if (left) throw new Error(`Lua script ${pieces.join('+')}: no value for ${left[0]}`);
  return text;
}
