// bench/pair.ts, for real and small: the ledger proxy and this checkout's gateway given the same
// streams at once, on the real Postgres and Redis, and a summary that names both with their
// figures and each one's ratio to the first. A bad flag stops it before anything starts.

import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { childEnv } from '../helpers/child.js';
import { ADMIN_URL, REDIS_URL } from '../helpers/stores.js';

const ROOT = path.join(import.meta.dirname, '..', '..');

function pair(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/pair.ts'), ...args], {
      cwd: ROOT,
      // childEnv: no coverage recorded in the children, whose bundle would not map onto the sources.
      env: childEnv({ DATABASE_URL: ADMIN_URL, REDIS_URL }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('the ledger proxy and a gateway side by side: both measured in every round', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pair-test-'));
  const out = path.join(dir, 'pair.json');
  const r = await pair([
    '--streams',
    '20',
    '--tokens',
    '3',
    '--interval-ms',
    '20',
    '--ramp-per-s',
    '200',
    '--rounds',
    '2',
    '--warmup',
    '10',
    '--out',
    out,
    '--perf',
    path.join(dir, 'perf'),
  ]);
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr.slice(-600)})`);
  const lines = r.stdout.trim().split('\n');
  t.match(lines[0], /^20 streams × 3 tokens every 20 ms to each of 2 targets at once/, 'the run says what it ran');
  t.match(lines[2], /^ledger\s+\d+(\.\d)?\s+1\.000\s/, 'the first target is the ledger proxy, its own ratio 1');
  t.match(
    lines[3],
    /^gateway 1 \(\S+\)\s+\d+(\.\d)?\s+\d\.\d{3}\s/,
    'then the gateway, with its ratio to the ledger proxy',
  );
  // --perf: a second table, each target's CPU by where it went.
  t.match(lines[5], /^where the CPU went \(perf cpu-clock samples/, 'the recorded split follows');
  t.match(lines[6], /^target\s+JS\s+GC\s+compile\s+V8\+node\s+libc\s+kernel\s+other\s+sampled$/);
  t.match(lines[7], /^ledger(\s+\d+\.\d){8}$/, "the ledger proxy's split");
  t.match(lines[8], /^gateway 1 \(\S+\)(\s+\d+\.\d){8}$/, "and the gateway's");
  const report = JSON.parse(readFileSync(out, 'utf8'));
  for (const w of report.where) {
    const sampled = Object.values(w.s_per_million_tokens as Record<string, number>).reduce((n, x) => n + x, 0);
    t.ok(sampled > 0, `${w.target}: CPU samples were taken (${sampled.toFixed(1)} s per million tokens)`);
  }
  t.equal(report.rounds.length, 2, 'a figure set per round');
  for (const round of report.rounds) {
    t.equal(round.length, 2, 'one figure per target');
    for (const f of round) {
      t.equal(f.completed, 20, 'every stream completed');
      t.ok(f.cpuSPerMTokens > 0, `CPU counted (${f.cpuSPerMTokens} s per million tokens)`);
    }
    t.ok(
      round[1].firstProcessShare >= 0 && round[1].firstProcessShare < 1,
      "the gateway primary's share is a part of its CPU",
    );
  }
});

t.test('an unknown flag is refused before anything starts', async (t) => {
  const r = await pair(['--nonsense']);
  t.equal(r.code, 1);
  t.match(r.stderr, /unknown flag --nonsense/);
});
