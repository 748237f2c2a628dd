// Builds the web dashboard (web/src, Preact) into a folder the gateway serves from memory:
// index.html plus content-hashed files under assets/, and manifest.json naming the client
// routes and the hash of the sources it was built from. `--if-stale` builds only when that
// hash differs from the sources', so `npm start` stays fast on an unchanged checkout.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { sourceHash as hashOf } from '../build/source-hash.js';
import { PAGES } from './src/routes.js';

const WEB = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_WEB_DIR = path.join(WEB, 'dist');

export interface WebManifest {
  source_hash: string;
  /** Client routes: the gateway answers each with index.html. */
  routes: string[];
  /** Entry files, relative to the build folder. */
  entry: { js: string; css?: string; preload: string[] };
}

/** The gateway's error vocabulary, which the app imports (one source for both sides). */
const SHARED = [path.join(WEB, '..', 'src', 'dashboard', 'error-codes.ts')];

/** The sources, this script and the locked dependency versions: what decides the output. */
export const sourceHash = (): string =>
  hashOf(WEB, [
    path.join(WEB, 'src'),
    ...SHARED,
    fileURLToPath(import.meta.url),
    path.join(WEB, '..', 'package-lock.json'),
  ]);

export function readManifest(dir: string): WebManifest | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as WebManifest;
  } catch {
    return undefined;
  }
}

export const isFresh = (dir: string) => readManifest(dir)?.source_hash === sourceHash();

function indexHtml(entry: WebManifest['entry']): string {
  // The favicon is inline so that browsers do not ask for /favicon.ico.
  const icon =
    "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%230b6e4f'/%3E%3C/svg%3E";
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>airouter</title>',
    `<link rel="icon" href="${icon}">`,
    entry.css ? `<link rel="stylesheet" href="/${entry.css}">` : '',
    // The chunks the entry imports, fetched alongside it rather than after it has been parsed.
    ...entry.preload.map((f) => `<link rel="modulepreload" href="/${f}">`),
    `<script type="module" src="/${entry.js}"></script>`,
    '</head>',
    '<body><div id="app"></div></body>',
    '</html>',
    '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Builds into a fresh folder beside `outDir` and swaps it in, so a gateway reading `outDir`
 * never sees half a build.
 */
export async function buildWeb(outDir = DEFAULT_WEB_DIR): Promise<WebManifest> {
  const hash = sourceHash();
  const tmp = `${outDir}.tmp-${process.pid}-${Date.now()}`;
  rmSync(tmp, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { app: path.join(WEB, 'src/main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['es2020'],
    minify: true,
    metafile: true,
    outdir: path.join(tmp, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const rel = (f: string) => path.relative(tmp, path.resolve(f)).split(path.sep).join('/');
  const outputs = Object.entries(result.metafile.outputs);
  const js = outputs.find(([, o]) => o.entryPoint?.endsWith('main.tsx'));
  if (!js) throw new Error('web build: no entry output');
  const preload = js[1].imports.filter((i) => i.kind === 'import-statement').map((i) => rel(i.path));
  const entry = { js: rel(js[0]), css: js[1].cssBundle ? rel(js[1].cssBundle) : undefined, preload };
  const manifest: WebManifest = { source_hash: hash, routes: [...PAGES], entry };
  writeFileSync(path.join(tmp, 'index.html'), indexHtml(entry));
  writeFileSync(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 1));
  mkdirSync(path.dirname(outDir), { recursive: true });
  const old = `${outDir}.old-${process.pid}-${Date.now()}`;
  if (existsSync(outDir)) renameSync(outDir, old);
  renameSync(tmp, outDir);
  rmSync(old, { recursive: true, force: true });
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const ifStale = process.argv.includes('--if-stale');
  const out = process.env.WEB_DIR ? path.resolve(process.env.WEB_DIR) : DEFAULT_WEB_DIR;
  if (ifStale && isFresh(out)) process.exit(0);
  const started = performance.now();
  const m = await buildWeb(out);
  console.log(
    `web dashboard built in ${Math.round(performance.now() - started)} ms: ${path.relative(process.cwd(), out) || '.'}/${m.entry.js}`,
  );
}
