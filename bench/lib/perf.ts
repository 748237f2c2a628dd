// Where a process tree's CPU time goes, from the kernel's own CPU-time samples (`perf record -e
// cpu-clock`, Debian's linux-perf): JIT-compiled JavaScript, V8's garbage collector, V8's
// compilers, the rest of node (V8's builtins and runtime, node's C++), libc, the kernel, and
// other native code (uWebSockets.js). The inspector's profiler samples wall time and charges a
// function for the time its thread waited to run again, which on two shared cores hid where the
// CPU went; these samples count only time on a core, for every thread of the processes (V8's
// GC and compiler threads included).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export const CATEGORIES = ['js', 'gc', 'compiler', 'node', 'libc', 'kernel', 'other'] as const;
export type Category = (typeof CATEGORIES)[number];
export type Breakdown = Record<Category, number>;

export const CATEGORY_TITLES: Record<Category, string> = {
  js: 'JS',
  gc: 'GC',
  compiler: 'compile',
  node: 'V8+node',
  libc: 'libc',
  kernel: 'kernel',
  other: 'other',
};

/** Why `perf` cannot record here, or undefined when it can. */
export function perfUnavailable(): string | undefined {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'perf is not installed (apt-get install linux-perf)';
  }
  return undefined;
}

const GC =
  /Scaveng|MarkCompact|Marking|Sweep|Evacuat|Heap::|GCTracer|MinorMC|RememberedSet|SlotSet|MemoryAllocator|SemiSpace|NewSpace|PagedSpace|MemoryChunk/;
const COMPILER =
  /v8::internal::(compiler|maglev|turboshaft|baseline)::|Compiler::|CompileLazy|Parser::|PreParser|BytecodeGenerator|interpreter::Bytecode(Array)?Builder/;

/** The category of one sample's place: its DSO (as perf names it) and symbol. */
export function categorize(dso: string, kernel: boolean, symbol: string): Category {
  if (kernel) return 'kernel';
  if (dso.startsWith('[JIT]') || symbol.startsWith('JS:')) return 'js';
  if (dso === 'node') {
    if (GC.test(symbol)) return 'gc';
    if (COMPILER.test(symbol)) return 'compiler';
    return 'node';
  }
  if (dso.startsWith('libc.so')) return 'libc';
  return 'other';
}

/** `perf report --fields period,dso,sym` text → seconds by category. */
export function parseReport(text: string): Breakdown {
  const out = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Breakdown;
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\S.*?)\s+\[([.k])\]\s+(.*)$/.exec(line);
    if (!m) continue;
    out[categorize(m[2]!, m[3] === 'k', m[4]!)] += Number(m[1]) / 1e9;
  }
  return out;
}

/** One recording of a set of processes, from start() until stop(). */
export class PerfRecording {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(
    pids: number[],
    readonly file: string,
  ) {
    // cpu-clock's period is in nanoseconds, so a sample's period is the CPU time it stands for.
    this.child = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '499', '-p', pids.join(','), '-o', file], {
      stdio: 'ignore',
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  async stop(): Promise<Breakdown> {
    this.child.kill('SIGINT');
    await this.exited;
    const text = execFileSync(
      'perf',
      ['report', '-i', this.file, '--no-children', '--fields', 'period,dso,sym', '--stdio', '--percent-limit', '0'],
      {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    return parseReport(text);
  }
}
