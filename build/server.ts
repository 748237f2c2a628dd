// Compiles the gateway (src/, TypeScript) into one ES module, dist/airouter.js, that plain
// `node` runs: `npm start` uses it, so a serving process carries no TypeScript loader (tsx
// keeps an esbuild service and a loader thread alive in every process). Packages stay
// external, loaded from node_modules as usual. `--if-stale` builds only when the sources
// changed since the last build; `node src/bin.js` still runs the sources directly.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { sourceHash } from './source-hash.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
/** One folder below the root, as src/paths.ts expects of whatever file it ends up in. */
export const DEFAULT_BUNDLE = path.join(ROOT, 'dist', 'airouter.js');

/**
 * What src/bin.js does, minus the loader: a module of no file (esbuild's stdin cannot sit beside
 * a second entry), resolved from src/.
 */
const MAIN_ENTRY = 'airouter:main';
const mainEntry: esbuild.Plugin = {
  name: 'main-entry',
  setup(b) {
    b.onResolve({ filter: /^airouter:main$/ }, () => ({ path: 'bin.ts', namespace: 'airouter-main' }));
    b.onLoad({ filter: /.*/, namespace: 'airouter-main' }, () => ({
      contents: "import { main } from './cli/main.ts';\nawait main(process.argv.slice(2));\n",
      resolveDir: SRC,
      loader: 'ts',
    }));
  },
};

/** The tokenizer thread's entry (src/billing/tokenizer/worker.ts) is `<name>-tokenizer.js`. */
const TOKENIZER_SUFFIX = '-tokenizer';

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

/** The files of one build: the entry and its chunks (`<name>-<hash>.js`), each with its map. */
const partOf = (entry: string) => {
  const base = path.basename(entry, '.js');
  const re = new RegExp(
    `^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(-[A-Z0-9]{8}|${TOKENIZER_SUFFIX})?\\.js(\\.map)?$`,
  );
  return (file: string) => re.test(file);
};

/**
 * Code-split: the entry holds the command line, and `serve`'s cluster primary loads only what it
 * runs (the outbox writer, the stores, the metrics) while the server itself (the HTTP stack, the
 * dialects, RxJS, the dashboard, mail and payments) is a chunk that only the workers import: the
 * primary held about 14 MB more of heap with the whole gateway loaded. Each dialect and payment
 * provider is a chunk of its own besides, which the server imports as it starts (their
 * registries load them by name). Chunks sit beside the entry, at the folder depth src/paths.ts
 * expects.
 *
 * Built in a folder of its own, then moved in, the entry last: a starting process never reads a
 * half-written build, and chunks are named by their content, so a rebuild never changes one
 * under a running gateway. Chunks of earlier builds are removed afterwards: a gateway imports
 * its chunks while it starts, never later.
 */
export async function buildServer(bundle = DEFAULT_BUNDLE): Promise<void> {
  const hash = serverSourceHash();
  const dir = path.dirname(bundle);
  const name = path.basename(bundle, '.js');
  const tmp = path.join(dir, `.build-${name}-${process.pid}`);
  mkdirSync(tmp, { recursive: true });
  try {
    await esbuild.build({
      entryPoints: [
        { in: MAIN_ENTRY, out: name },
        // The tokenizer thread's entry, loaded by new Worker() from beside the chunk that
        // starts it, which finds it by the name defined here (src/billing/tokenizer/pool.ts).
        { in: path.join(SRC, 'billing', 'tokenizer', 'worker.ts'), out: `${name}${TOKENIZER_SUFFIX}` },
      ],
      define: { AIROUTER_TOKENIZER_WORKER: JSON.stringify(`./${name}${TOKENIZER_SUFFIX}.js`) },
      plugins: [mainEntry],
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: tmp,
      entryNames: '[name]',
      chunkNames: `${name}-[hash]`,
      // Linked, so that `node --enable-source-maps dist/airouter.js` reports src/ lines.
      sourcemap: 'linked',
      logLevel: 'silent',
      legalComments: 'none',
    });
    const files = readdirSync(tmp);
    const entry = `${name}.js`;
    for (const f of files) if (f !== entry) renameSync(path.join(tmp, f), path.join(dir, f));
    renameSync(path.join(tmp, entry), bundle);
    const built = new Set(files);
    const ours = partOf(bundle);
    for (const f of readdirSync(dir)) if (ours(f) && !built.has(f)) rmSync(path.join(dir, f), { force: true });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  writeFileSync(stampOf(bundle), `${JSON.stringify({ source_hash: hash })}\n`);
}

/** Every file a build of `bundle` wrote (entry, chunks, maps), for callers that clean up. */
export function buildFiles(bundle = DEFAULT_BUNDLE): string[] {
  const dir = path.dirname(bundle);
  const ours = partOf(bundle);
  return [
    ...readdirSync(dir)
      .filter(ours)
      .map((f) => path.join(dir, f)),
    stampOf(bundle),
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--if-stale') && isFresh()) process.exit(0);
  const started = performance.now();
  await buildServer();
  console.log(
    `gateway built in ${Math.round(performance.now() - started)} ms: ${path.relative(process.cwd(), DEFAULT_BUNDLE)}`,
  );
}
