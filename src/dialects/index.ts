// The registry: every wire dialect the gateway speaks, by its one name (the catalogue's
// `dialect`, its folder, `Dialect.name`). Everything a dialect contributes is declared by its
// folder: index.ts (the IR mapping, the upstream side, its surface if served to clients, its
// embeddings adapter if its providers have one) and meta.ts (what the catalogue reads without
// loading it). Adding one is its folder and one line here and in names.ts; the type system
// refuses the one without the other, and test/dialects/registry.test.ts checks what each provides.

import type { Dialect, DialectOf } from './dialect.js';
import type { DIALECT_METAS, DialectName } from './names.js';
import { openai } from './openai/index.js';
import { anthropic } from './anthropic/index.js';
import { responses } from './responses/index.js';
import { gemini } from './gemini/index.js';

type Registry = { [M in (typeof DIALECT_METAS)[number] as M['name']]: DialectOf<M> };

export const DIALECTS = {
  openai,
  anthropic,
  responses,
  gemini,
} satisfies Registry;

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
