// uWebSockets.js, loaded from the native binary for this platform and Node ABI. The package
// (@based/uws, see docs/architecture.md) ships one binary per platform and ABI beside its
// uws.js; we load the binary ourselves, by path, so that a runtime it has no binary for fails
// here with a message that says what to do (src/runtime.ts), never with a half-working server.

import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';
import { uwsBinary, uwsLoadError } from '../runtime.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** `abi` is this process's; a test passes another to see what an unsupported runtime is told. */
export function loadUws(abi: string = process.versions.modules): typeof UWS {
  try {
    return require(uwsBinary(abi)) as typeof UWS;
  } catch (err) {
    throw uwsLoadError(abi, (err as Error).message);
  }
}
