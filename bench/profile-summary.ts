// Summarises V8 .cpuprofile files (e.g. from `npm run bench -- --profile DIR`): where the
// gateway's CPU went, by function (self time), by file, and by package.
//
//   node --import tsx bench/profile-summary.ts DIR|FILE… [--top N]

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const args = process.argv.slice(2);
const topIdx = args.indexOf('--top');
const top = topIdx === -1 ? 30 : Number(args[topIdx + 1]);
const inputs = args.filter((a, i) => a !== '--top' && (topIdx === -1 || i !== topIdx + 1));
if (inputs.length === 0) {
  process.stderr.write('usage: node --import tsx bench/profile-summary.ts DIR|FILE… [--top N]\n');
  process.exit(2);
}
const files = inputs.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(p, f))
    : [p],
);

const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
const byPkg = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
let idle = 0;

const short = (url: string) => {
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm !== -1) return u.slice(nm + 'node_modules/'.length);
  const src = u.indexOf('/src/');
  if (src !== -1) return u.slice(src + 1);
  return u || '(native)';
};
const pkg = (url: string) => {
  const s = short(url);
  if (s.startsWith('src/')) return 'gateway src/';
  if (s.startsWith('node:') || s === '(native)' || !s.includes('/'))
    return s.startsWith('node:') ? 'node internals' : s;
  const parts = s.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
};

for (const file of files) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Time per node from samples × deltas (hitCount alone ignores uneven sampling intervals).
  const self = new Map<number, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++)
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0));
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') {
      if (name === '(idle)') {
        idle += us;
        continue;
      }
    }
    total += us;
    const key = `${name}  ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    byFile.set(short(n.callFrame.url), (byFile.get(short(n.callFrame.url)) ?? 0) + us);
    byPkg.set(pkg(n.callFrame.url), (byPkg.get(pkg(n.callFrame.url)) ?? 0) + us);
    // Inclusive time of gateway functions: credit every src/ frame on the stack once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!f.url.includes('/src/')) continue;
      const k = `${f.functionName || '(anonymous)'}  ${short(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
}

const print = (title: string, m: Map<string, number>, n: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    process.stdout.write(
      `${((us / total) * 100).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`,
    );
  }
};
process.stdout.write(
  `${files.length} profile(s); busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms\n`,
);
print('By package (self time)', byPkg, 15);
print('By file (self time)', byFile, 20);
print(`By function (self time), top ${top}`, byFn, top);
print('Gateway functions, inclusive (time with them on the stack)', inclusive, top);
