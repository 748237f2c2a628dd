// What a build was made from, as one hash: a build whose recorded hash matches the sources'
// is fresh, so `npm start` rebuilds only after a change.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesUnder(path.join(dir, d.name)) : [path.join(dir, d.name)]))
    .sort();
}

/** Every file under the given folders and the given files, by path relative to `base` and content. */
export function sourceHash(base: string, inputs: string[]): string {
  const h = createHash('sha256');
  for (const input of inputs) {
    if (!existsSync(input)) continue;
    for (const file of statSync(input).isDirectory() ? filesUnder(input) : [input]) {
      h.update(path.relative(base, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return h.digest('hex');
}
