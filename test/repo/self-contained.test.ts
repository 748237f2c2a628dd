// A clone of this repository must stand on its own: no tracked file may read or link the
// reference folder that sits beside the checkout during development.

import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO_ROOT } from '../helpers/child.js';

// Spelled in pieces so that this file does not match itself.
const SIBLING = ['..', 'shared'].join('/');
const PATTERN = new RegExp(`(?:\\.\\./)+shared\\b|/work/${'shared'}\\b`);

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' });
  return out.split('\0').filter((f) => f !== '' && f !== 'package-lock.json');
}

t.test(`no tracked file references ${SIBLING}`, async (t) => {
  const files = trackedFiles();
  t.ok(files.length > 50, `git lists the project's files (${files.length})`);
  const offenders: string[] = [];
  for (const rel of files) {
    const abs = path.join(REPO_ROOT, rel);
    let text: string;
    try {
      if (statSync(abs).size > 4 * 1024 * 1024) continue;
      text = readFileSync(abs, 'utf8');
    } catch {
      continue; // deleted in the work tree
    }
    text.split('\n').forEach((line, i) => {
      if (PATTERN.test(line)) offenders.push(`${rel}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  t.same(offenders, [], 'every file the project needs is inside the repository');
});

t.test('the pattern catches what it must', async (t) => {
  t.ok(PATTERN.test(`see ${SIBLING}/docs/API.md`));
  t.ok(PATTERN.test(`path.resolve(root, '../../${'shared'}/fixtures')`));
  t.notOk(PATTERN.test('a shared hot store'));
});

t.test('the recorded fixtures are in the repository', async (t) => {
  for (const rel of [
    'test/fixtures/README.md',
    'test/fixtures/openai/stream_text_include_usage.sse',
    'test/fixtures/anthropic/stream_text_ping.sse',
  ]) {
    t.ok(statSync(path.join(REPO_ROOT, rel)).size > 0, rel);
  }
});
