// The gateway as `npm start` runs it, built from the sources as they are now, for the tests that
// start the command line or a server as a child process. One build serves the whole suite: it
// is named by a digest of what it is built from, so the first test process to need it builds it
// and the others find it (two that build at once write the same files, each into a folder of its
// own first, see build/server.ts). A command started through it costs about half the CPU of
// `node src/bin.js`, which loads every module through tsx; test/foundation/cli.test.ts still
// runs src/bin.js itself.

import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFiles, buildServer, serverSourceHash } from '../../build/server.js';

const DIST = fileURLToPath(new URL('../../dist', import.meta.url));

const PREFIX = 'suite-';
let current: Promise<string> | undefined;

/** The path of the current sources' bundle (dist/suite-<digest>.js), built if it is not there. */
export function suiteBundle(): Promise<string> {
  current ??= (async () => {
    const digest = serverSourceHash().slice(0, 12);
    const dist = DIST;
    const bundle = path.join(dist, `${PREFIX}${digest}.js`);
    let present: string[] = [];
    try {
      present = readdirSync(dist);
    } catch {
      // No dist/ yet: the build makes it.
    }
    if (present.includes(path.basename(bundle))) return bundle;
    await buildServer(bundle);
    // Builds of earlier sources: no test starts them any more.
    for (const f of present) {
      const m = new RegExp(`^(${PREFIX}[0-9a-f]{12})\\.js$`).exec(f);
      if (m && m[1] !== `${PREFIX}${digest}`)
        for (const old of buildFiles(path.join(dist, f))) rmSync(old, { force: true });
    }
    return bundle;
  })();
  return current;
}
