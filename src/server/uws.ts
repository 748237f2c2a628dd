// uWebSockets.js, loaded from the native binary for this platform and Node ABI. The package
// (@based/uws, see docs/architecture.md) ships one binary per platform and ABI beside its
// uws.js; we load the binary ourselves, by path, so that a runtime it has no binary for fails
// here with a message that says what to do (src/runtime.ts), never with a half-working server.

import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';
import { uwsBinary, uwsLoadError } from '../runtime.js';

export type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket,
  WebSocketBehavior,
} from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/**
 * `maxHeaderBytes` caps a request's head (MAX_HEADER_BYTES): uWS reads it from
 * UWS_HTTP_MAX_HEADERS_SIZE once, when its binary loads (an operator's own setting wins), and
 * answers 431 past it; its own default, 4 KiB, is below what clients send with long cookies or
 * tokens. `abi` is this process's; a test passes another to see what an unsupported runtime is told.
 */
export function loadUws(opts: { maxHeaderBytes?: number; abi?: string } = {}): typeof UWS {
  const abi = opts.abi ?? process.versions.modules;
  if (opts.maxHeaderBytes && process.env.UWS_HTTP_MAX_HEADERS_SIZE === undefined)
    process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(opts.maxHeaderBytes);
  try {
    return require(uwsBinary(abi)) as typeof UWS;
  } catch (err) {
    throw uwsLoadError(abi, (err as Error).message);
  }
}
