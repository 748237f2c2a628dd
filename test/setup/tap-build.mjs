// Run before the suite (package.json's pretest, and .ci/run before its parallel runs). tap
// compiles its test class for the plugins .taprc names; a fresh `npm ci` holds the build of
// tap's defaults, and tap rebuilds it when a run starts on another: under the run's own test
// files, and under any other run sharing node_modules (two at once left a half-written build on
// a fresh clone, and every test file failed to start). So it is built here, once, and only
// when the plugins differ.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

let fresh = false;
try {
  // tap's own packages, as its runner reads them.
  const { TapConfig } = await import('@tapjs/config');
  const { signature } = await import('@tapjs/test');
  fresh = (await TapConfig.load()).pluginSignature === signature;
} catch {
  // A build that does not load is rebuilt.
}
if (!fresh) {
  const tap = createRequire(import.meta.url)
    .resolve('tap/package.json')
    .replace(/package\.json$/, 'dist/esm/run.mjs');
  const r = spawnSync(process.execPath, [tap, 'build'], { stdio: 'inherit' });
  if (r.status !== 0) console.error('tap build failed: `npm ci` installs tap afresh');
  process.exit(r.status ?? 1);
}
