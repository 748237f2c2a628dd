// Compiles the gateway (src/, TypeScript) into one ES module, dist/airouter.js, that plain
// `node` runs: `npm start` uses it, so a serving process carries no TypeScript loader (tsx
// keeps an esbuild service and a loader thread alive in every process). Packages stay
// external, loaded from node_modules as usual. `--if-stale` builds only when the sources
// changed since the last build; `node src/bin.js` still runs the sources directly.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { sourceHash } from './source-hash.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
/** One folder below the root, as src/paths.ts expects of whatever file it ends up in. */
export const DEFAULT_BUNDLE = path.join(ROOT, 'dist', 'airouter.js');

const stampOf = (bundle: string) => bundle.replace(/\.js$/, '.json');

export const serverSourceHash = (): string =>
  sourceHash(ROOT, [SRC, fileURLToPath(import.meta.url), path.join(ROOT, 'package-lock.json')]);

export function isFresh(bundle = DEFAULT_BUNDLE): boolean {
  try {
    return JSON.parse(readFileSync(stampOf(bundle), 'utf8')).source_hash === serverSourceHash();
  } catch {
    return false;
  }
}

/** Writes beside `bundle` and renames into place: a starting process never reads half a file. */
export async function buildServer(bundle = DEFAULT_BUNDLE): Promise<void> {
  const hash = serverSourceHash();
  const tmp = `${bundle}.tmp-${process.pid}`;
  mkdirSync(path.dirname(bundle), { recursive: true });
  await esbuild.build({
    // What src/bin.js does, minus the loader.
    stdin: { contents: "import { main } from './cli/main.ts';\nawait main(process.argv.slice(2));\n", resolveDir: SRC, sourcefile: 'bin.ts', loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: tmp,
    // Linked, so that `node --enable-source-maps dist/airouter.js` reports src/ lines.
    sourcemap: 'linked',
    logLevel: 'silent',
    legalComments: 'none',
  });
  // The bundle names its map by the temporary file's name; the map goes first, then the file
  // that points at it.
  writeFileSync(tmp, readFileSync(tmp, 'utf8').replace(/\/\/# sourceMappingURL=.*\n?$/, `//# sourceMappingURL=${path.basename(bundle)}.map\n`));
  renameSync(`${tmp}.map`, `${bundle}.map`);
  renameSync(tmp, bundle);
  writeFileSync(stampOf(bundle), `${JSON.stringify({ source_hash: hash })}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--if-stale') && isFresh()) process.exit(0);
  const started = performance.now();
  await buildServer();
  console.log(`gateway built in ${Math.round(performance.now() - started)} ms: ${path.relative(process.cwd(), DEFAULT_BUNDLE)}`);
}
