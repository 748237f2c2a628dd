// uWebSockets.js, loaded from its native binary only. The package falls back to a slow
// pure-JS server when the binary does not load; we refuse to serve on that silently.

import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export function loadUws(): typeof UWS {
  const binary = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return require(binary) as typeof UWS;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native module did not load (${binary}: ${(err as Error).message.split('\n')[0]}). ` +
        'The gateway needs it: use Node 20 on x86_64/arm64 Linux with glibc ≥ 2.36, and reinstall with npm ci.',
    );
  }
}
