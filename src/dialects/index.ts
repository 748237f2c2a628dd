// The full registry: every wire dialect the gateway speaks, by its one name (the catalogue's
// `dialect`, its folder, `Dialect.name`), loaded from the folders that names.ts lists. Everything
// a dialect contributes is declared by its folder: index.ts (the IR mapping, the upstream side,
// its surface if served to clients, its embeddings adapter if its providers have one), which
// exports the dialect under its name, and meta.ts (what the catalogue reads without loading it).
// Adding one is its folder and its line in names.ts; test/dialects/registry.test.ts checks what
// each folder provides.

import type { Dialect, DialectOf } from './dialect.js';
import { DIALECT_METAS, type DialectName } from './names.js';

type Registry = { [M in (typeof DIALECT_METAS)[number] as M['name']]: DialectOf<M> };

/**
 * A dialect's folder, found by its name: names.ts (which the command line, the cluster primary
 * and the web app's type check read) then names no dialect code, and a dialect needs no line
 * here. esbuild bundles every `<folder>/index.ts` for this import, which is why it names the .ts.
 */
async function load(name: DialectName): Promise<Dialect> {
  const folder = (await import(`./${name}/index.ts`)) as Partial<Record<string, Dialect>>;
  const dialect = folder[name];
  if (dialect?.name !== name) throw new Error(`src/dialects/${name}/index.ts exports no dialect named ${name}`);
  return dialect;
}

/**
 * Loaded when this module is first imported (the server's, the tokenizer thread's request
 * counter), and read synchronously after that. No dialect's folder may import this module: its
 * import would wait for the loading that waits for it.
 */
export const DIALECTS = Object.fromEntries(
  await Promise.all(DIALECT_METAS.map(async (m) => [m.name, await load(m.name)] as const)),
) as Registry;

export { DIALECT_NAMES, type DialectName } from './names.js';

/** A dialect's name (what crosses to another thread, where the object cannot). */
export const dialectName = (d: Dialect): DialectName => d.name;

/** POST /v1/embeddings: not a dialect's surface (no IR, no stream), but its requests are billed under this name. */
export const EMBEDDINGS_SURFACE = 'embeddings';

/** The usage record's `surface` values: one per dialect served to clients, and embeddings. */
export const SURFACE_NAMES = [
  ...Object.values(DIALECTS).flatMap((d: Dialect) => (d.surface ? [d.surface.name] : [])),
  EMBEDDINGS_SURFACE,
];
