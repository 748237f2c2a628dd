// The `airouter` command runs the build when it is newer than every file it was built from,
// and the sources otherwise (src/bin-entry.js): a tree of files with set times, and the real
// src/bin.js run in it.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { builtEntry } from '../../src/bin-entry.js';
import { REPO_ROOT } from '../helpers/child.js';

const root = mkdtempSync(path.join(tmpdir(), 'airouter-bin-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const at = (file: string, seconds: number, text = '') => {
  const p = path.join(root, file);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, text);
  utimesSync(p, seconds, seconds);
};
const T = 1_800_000_000;
at('src/cli/main.ts', T);
at('package-lock.json', T);
at('build/server.ts', T);
for (const dir of ['src/cli', 'src', 'build']) utimesSync(path.join(root, dir), T, T);
copyFileSync(path.join(REPO_ROOT, 'src', 'bin.js'), path.join(root, 'src', 'bin.js'));
copyFileSync(path.join(REPO_ROOT, 'src', 'bin-entry.js'), path.join(root, 'src', 'bin-entry.js'));
for (const f of ['src/bin.js', 'src/bin-entry.js', 'src']) utimesSync(path.join(root, f), T, T);

t.test('no build: the sources', async (t) => {
  t.equal(builtEntry(root), undefined);
});

t.test('a build newer than its sources runs, as plain node', async (t) => {
  at('dist/airouter.js', T + 10, 'console.log("the build ran", process.argv.slice(2).join(" "));\n');
  t.equal(builtEntry(root), undefined, 'without its stamp (written last), not yet');
  at('dist/airouter.json', T + 10, '{}');
  t.equal(builtEntry(root), path.join(root, 'dist', 'airouter.js'));
  const out = execFileSync(process.execPath, [path.join(root, 'src', 'bin.js'), 'user', 'list'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  t.equal(out.trim(), 'the build ran user list', 'src/bin.js ran it, with the arguments');
});

t.test('a source, the lock file or the build script newer than the build: the sources', async (t) => {
  for (const file of ['src/cli/main.ts', 'package-lock.json', 'build/server.ts']) {
    utimesSync(path.join(root, file), T + 20, T + 20);
    t.equal(builtEntry(root), undefined, `${file} changed since`);
    utimesSync(path.join(root, file), T, T);
  }
  at('src/new-file.ts', T + 20);
  t.equal(builtEntry(root), undefined, 'a file added since');
});
