// The runtimes the gateway supports, and the startup check of the one it is on. What ties the
// gateway to a runtime is uWebSockets.js: one native binary per platform and Node ABI
// (docs/architecture.md, "Runtimes and uWebSockets.js"). Kept apart from src/server/uws.ts so
// that a cluster's primary, which never serves, can check without loading the server.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The Node majors the gateway runs on, each with the glibc its uWS binary needs on Linux. */
export const SUPPORTED_NODE = [
  { major: 20, abi: '115', glibc: '2.27' },
  { major: 22, abi: '127', glibc: '2.27' },
  { major: 24, abi: '137', glibc: '2.38' },
] as const;

export const supportedNodeText = (): string =>
  SUPPORTED_NODE.map((n) => `Node ${n.major}${process.platform === 'linux' ? ` (glibc ≥ ${n.glibc})` : ''}`).join(', ');

/** The path of uWebSockets.js's native binary for `abi` (this process's by default). */
export function uwsBinary(abi: string = process.versions.modules): string {
  const dir = path.dirname(require.resolve('uWebSockets.js'));
  return path.join(dir, `uws_${process.platform}_${process.arch}_${abi}.node`);
}

/** What an operator is told when the binary does not load: which runtimes, and what to do. */
export function uwsLoadError(abi: string, reason: string): Error {
  const supported = SUPPORTED_NODE.find((n) => n.abi === abi);
  const glibc = hostGlibc();
  const tooOld = supported && glibc && versionBelow(glibc, supported.glibc);
  return new Error(
    `uWebSockets.js native module did not load (${path.basename(uwsBinary(abi))}: ${reason.split('\n')[0]}). ` +
      `The gateway runs on ${supportedNodeText()}, on x86_64/arm64 Linux, macOS or Windows; this is Node ${process.versions.node}${abi === process.versions.modules ? '' : ` asking for ABI ${abi}`}. ` +
      (tooOld
        ? `This host's glibc is ${glibc}, older than the ${supported.glibc} Node ${supported.major}'s binary needs: use ${
            SUPPORTED_NODE.filter((n) => !versionBelow(glibc, n.glibc))
              .map((n) => `Node ${n.major}`)
              .join(' or ') || 'a newer host'
          } here, or a host with glibc ≥ ${supported.glibc}.`
        : supported
          ? 'Reinstall with npm ci; on Linux, check the glibc version (ldd --version).'
          : 'Switch to a supported Node (e.g. nvm install 24), then reinstall with npm ci.'),
  );
}

/** The glibc this process runs on, or null (not Linux, or another C library). */
function hostGlibc(): string | null {
  if (process.platform !== 'linux') return null;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime ?? null;
}

const versionBelow = (a: string, b: string): boolean => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < Math.max(x!.length, y!.length); i++)
    if ((x![i] ?? 0) !== (y![i] ?? 0)) return (x![i] ?? 0) < (y![i] ?? 0);
  return false;
};

/**
 * The startup check of a process that will not load uWS itself (a cluster's primary): loads
 * the binary in a short-lived child of the same node, so that a runtime without one stops the
 * gateway once, with the reason, instead of its workers dying and being restarted forever.
 */
export function checkUwsLoads(): void {
  const binary = uwsBinary();
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(binary)})`], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status === 0) return;
  const reason =
    (r.stderr ?? '')
      .split('\n')
      .find((l) => /Error|error:/.test(l))
      ?.replace(/^.*?Error: /, '') ??
    r.error?.message ??
    `exit ${r.status}`;
  throw uwsLoadError(process.versions.modules, reason);
}
