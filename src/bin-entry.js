// Which code `airouter` runs: the build (dist/airouter.js, plain node, well under a second a
// command) when it is newer than every file it was built from, else the sources through tsx
// (seconds a command, but nothing to build after an edit). Plain JavaScript: it runs before any
// loader. It compares times, not contents: a checkout or an edit makes a file newer than the
// build, and the sources run until the next `npm run build` (or `npm start`, which builds).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Newest modification time under `input` (a file or a folder), 0 when it is absent. */
function newest(input) {
  if (!existsSync(input)) return 0;
  const stat = statSync(input);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(input)) latest = Math.max(latest, newest(path.join(input, name)));
  return latest;
}

/**
 * The build's entry under `root` when its stamp (dist/airouter.json, written last) is at least as
 * new as src/, package-lock.json and build/server.ts, the inputs of build/server.ts's hash; else
 * undefined: run the sources.
 */
export function builtEntry(root) {
  const entry = path.join(root, 'dist', 'airouter.js');
  const stamp = path.join(root, 'dist', 'airouter.json');
  if (!existsSync(entry) || !existsSync(stamp)) return undefined;
  const built = statSync(stamp).mtimeMs;
  const inputs = [path.join(root, 'src'), path.join(root, 'package-lock.json'), path.join(root, 'build', 'server.ts')];
  return inputs.every((input) => newest(input) <= built) ? entry : undefined;
}
