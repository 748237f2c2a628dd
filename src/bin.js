#!/usr/bin/env node
// The `airouter` command: the build when it is fresh (src/bin-entry.js), else the sources
// through tsx's loader, so a checkout needs no build step. AIROUTER_SOURCES=1 runs the sources
// whatever the build.
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { builtEntry } from './bin-entry.js';

const built =
  process.env.AIROUTER_SOURCES === '1' ? undefined : builtEntry(fileURLToPath(new URL('..', import.meta.url)));
if (built) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('./cli/main.ts');
  await main(process.argv.slice(2));
}
