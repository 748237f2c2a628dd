// uWebSockets.js, loaded from the native binary for this platform and Node ABI. The package
// (@based/uws, see docs/architecture.md) ships one binary per platform and ABI beside its
// uws.js; we load the binary ourselves, by path, so that a runtime it has no binary for fails
// here with a message that says what to do, never with a half-working server.

import { createRequire } from 'node:module';
import path from 'node:path';
import type * as UWS from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** The Node majors the gateway runs on, each with the glibc its uWS binary needs on Linux. */
export const SUPPORTED_NODE = [
  { major: 20, abi: '115', glibc: '2.27' },
  { major: 22, abi: '127', glibc: '2.27' },
  { major: 24, abi: '137', glibc: '2.38' },
] as const;

export const supportedNodeText = (): string =>
  SUPPORTED_NODE.map((n) => `Node ${n.major}${process.platform === 'linux' ? ` (glibc ≥ ${n.glibc})` : ''}`).join(', ');

/** The path of the native binary for this process, inside the installed package. */
export function uwsBinary(abi: string = process.versions.modules): string {
  const dir = path.dirname(require.resolve('uWebSockets.js'));
  return path.join(dir, `uws_${process.platform}_${process.arch}_${abi}.node`);
}

/** `abi` is this process's; a test passes another to see what an unsupported runtime is told. */
export function loadUws(abi: string = process.versions.modules): typeof UWS {
  const binary = uwsBinary(abi);
  try {
    return require(binary) as typeof UWS;
  } catch (err) {
    const supported = SUPPORTED_NODE.some((n) => n.abi === abi);
    throw new Error(
      `uWebSockets.js native module did not load (${path.basename(binary)}: ${(err as Error).message.split('\n')[0]}). ` +
        `The gateway runs on ${supportedNodeText()}, on x86_64/arm64 Linux, macOS or Windows; this is Node ${process.versions.node}${abi === process.versions.modules ? '' : ` asking for ABI ${abi}`}. ` +
        (supported
          ? 'Reinstall with npm ci; on Linux, check the glibc version (ldd --version).'
          : 'Switch to a supported Node (e.g. nvm install 24), then reinstall with npm ci.'),
    );
  }
}
