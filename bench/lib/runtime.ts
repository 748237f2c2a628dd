// The runtime a bench report's figures were taken on: every process the bench starts (gateway,
// bare and ledger proxies, upstreams) runs under the bench's own node (process.execPath), so
// this is theirs too. Figures from different Node majors are not comparable without it.

import { createRequire } from 'node:module';
import path from 'node:path';
import { uwsBinary } from '../../src/runtime.js';

const require = createRequire(import.meta.url);

export interface Runtime {
  node: string;
  v8: string;
  /** The Node ABI, which picks uWebSockets.js's binary. */
  abi: string;
  /** Which uWebSockets.js binary, and from which package version. */
  uws: string;
  /** The C library the process runs on (null where not glibc). */
  glibc: string | null;
  exec_path: string;
}

export function runtime(): Runtime {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  let pkg = 'unknown';
  try {
    const p = require(path.join(path.dirname(require.resolve('uWebSockets.js')), 'package.json')) as {
      name: string;
      version: string;
    };
    pkg = `${p.name}@${p.version}`;
  } catch {
    // Not resolvable from here: the report names the package 'unknown'.
  }
  return {
    node: process.version,
    v8: process.versions.v8,
    abi: process.versions.modules,
    uws: `${pkg} ${path.basename(uwsBinary())}`,
    glibc: header?.glibcVersionRuntime ?? null,
    exec_path: process.execPath,
  };
}

export const runtimeText = (r: Runtime): string =>
  `Node ${r.node} (V8 ${r.v8}, ABI ${r.abi}${r.glibc ? `, glibc ${r.glibc}` : ''}), uWS ${r.uws}`;
