// Resource use of a process tree (the gateway's primary and its workers, or nginx's master
// and its workers), read from /proc: RSS from status (VmRSS), PSS from smaps_rollup, CPU from
// stat (utime + stime, plus cutime + cstime of children already reaped, so a worker that died
// still counts).
//
// RSS summed over a tree counts every page its processes share once per process: node's own
// binary (about 45 MB resident in each of them) counts three times for a primary and two
// workers. PSS splits each shared page between the processes that map it, so its sum is what
// the tree costs the machine; both are reported.

import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export const procAvailable = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

interface Stat {
  pid: number;
  ppid: number;
  /** utime + stime, seconds. */
  cpu: number;
  /** cutime + cstime (reaped children), seconds. */
  childCpu: number;
}

function readStat(pid: number): Stat | null {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** The command name, and the fields after it, of a /proc/<pid>/stat text. */
function parseStat(pid: number, text: string): Stat & { name: string } {
  // The command name is in parentheses and may contain spaces: fields start after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state); utime is field 14 → f[11].
  const t = ticksPerSecond();
  return {
    pid,
    name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')),
    ppid: Number(f[1]),
    cpu: (Number(f[11]) + Number(f[12])) / t,
    childCpu: (Number(f[13]) + Number(f[14])) / t,
  };
}

/** Every process's stat, by one scan of /proc (one that ends meanwhile is left out). */
function allStats(): (Stat & { name: string })[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: (Stat & { name: string })[] = [];
  for (const e of entries) {
    const c = e.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue;
    }
    out.push(parseStat(Number(e), text));
  }
  return out;
}

/** One "<field>: N kB" line of a /proc file, in bytes (0 when the process is gone). */
function readKbField(pid: number, file: 'status' | 'smaps_rollup', field: RegExp): number {
  try {
    const m = field.exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const readRssBytes = (pid: number) => readKbField(pid, 'status', /VmRSS:\s+(\d+)\s+kB/);
const readPssBytes = (pid: number) => readKbField(pid, 'smaps_rollup', /^Pss:\s+(\d+)\s+kB/m);

/** Every descendant of `root` (children, their children…), found by one scan of /proc. */
export function descendantsOf(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const { pid, ppid } of allStats()) {
    const list = byParent.get(ppid);
    if (list) list.push(pid);
    else byParent.set(ppid, [pid]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * CPU seconds spent so far by every process whose command name is one of `names` (Postgres'
 * backends and Redis: the services a run shares the machine with), found by one scan of /proc.
 */
export function cpuOfCommands(names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const { name, cpu } of allStats()) if (name in out) out[name] += cpu;
  return out;
}

/** RSS and PSS of each process of the tree, MB (the root first). */
export function rssByProcess(root: number): { pid: number; rss_mb: number; pss_mb: number }[] {
  return [root, ...descendantsOf(root)].map((pid) => ({
    pid,
    rss_mb: mb(readRssBytes(pid)),
    pss_mb: mb(readPssBytes(pid)),
  }));
}

export interface TreeUsage {
  at: number;
  pids: number[];
  rssBytes: number;
  pssBytes: number;
  cpuSeconds: number;
  /** The root's own share of cpuSeconds (the gateway's primary: the usage writer's Postgres work). */
  rootCpuSeconds: number;
}

/**
 * Usage of `root` and its descendants. Children are looked up again only every few calls (a
 * /proc scan costs a few ms); a changed set of pids is how worker restarts are noticed.
 */
export class TreeSampler {
  private pids: number[] = [];
  private calls = 0;
  readonly seenPids = new Set<number>();

  constructor(readonly root: number) {}

  sample(refresh = false): TreeUsage {
    if (refresh || this.calls++ % 8 === 0) this.pids = [this.root, ...descendantsOf(this.root)];
    let rss = 0;
    let pss = 0;
    let cpu = 0;
    let rootCpu = 0;
    const alive: number[] = [];
    for (const pid of this.pids) {
      const s = readStat(pid);
      if (!s) continue;
      alive.push(pid);
      this.seenPids.add(pid);
      cpu += s.cpu + (pid === this.root ? s.childCpu : 0);
      if (pid === this.root) rootCpu = s.cpu;
      rss += readRssBytes(pid);
      pss += readPssBytes(pid);
    }
    return {
      at: performance.now(),
      pids: alive,
      rssBytes: rss,
      pssBytes: pss,
      cpuSeconds: cpu,
      rootCpuSeconds: rootCpu,
    };
  }
}

/** Samples a tree every `everyMs` while a measurement runs: peak RSS, CPU spent. */
export class UsageWindow {
  private timer?: NodeJS.Timeout;
  readonly start: TreeUsage;
  peakRss: number;
  peakPss: number;
  /** The highest RSS sampled while `held()` said so (undefined if it never did). */
  heldPeakRss: number | undefined = undefined;
  last: TreeUsage;

  /**
   * `held`, if given, says when a sample counts for heldPeakRss as well: for the stream
   * scenarios, while every stream of the level is open.
   */
  constructor(
    private readonly sampler: TreeSampler,
    everyMs = 250,
    private readonly held?: () => boolean,
  ) {
    this.start = sampler.sample(true);
    this.peakRss = this.start.rssBytes;
    this.peakPss = this.start.pssBytes;
    this.last = this.start;
    this.timer = setInterval(() => this.tick(), everyMs);
    this.timer.unref();
  }

  private tick(): TreeUsage {
    const u = this.sampler.sample();
    if (u.rssBytes > this.peakRss) this.peakRss = u.rssBytes;
    if (u.pssBytes > this.peakPss) this.peakPss = u.pssBytes;
    if (this.held?.() && u.rssBytes > (this.heldPeakRss ?? 0)) this.heldPeakRss = u.rssBytes;
    this.last = u;
    return u;
  }

  finish(): {
    rssStartMb: number;
    rssPeakMb: number;
    rssHeldPeakMb: number | null;
    rssEndMb: number;
    pssStartMb: number;
    pssPeakMb: number;
    cpuSeconds: number;
    rootCpuSeconds: number;
    processes: number;
  } {
    clearInterval(this.timer);
    const end = this.tick();
    return {
      rssStartMb: mb(this.start.rssBytes),
      rssPeakMb: mb(this.peakRss),
      rssHeldPeakMb: this.heldPeakRss === undefined ? null : mb(this.heldPeakRss),
      rssEndMb: mb(end.rssBytes),
      pssStartMb: mb(this.start.pssBytes),
      pssPeakMb: mb(this.peakPss),
      cpuSeconds: Math.round((end.cpuSeconds - this.start.cpuSeconds) * 100) / 100,
      rootCpuSeconds: Math.round((end.rootCpuSeconds - this.start.rootCpuSeconds) * 100) / 100,
      processes: end.pids.length,
    };
  }
}

export const mb = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;

/**
 * Waits until the tree uses less than `share` of one core over `windowMs` (leftover work from
 * the previous measurement: usage batches being written, GC), or until `maxMs` passed.
 * Returns how long it waited.
 */
export async function waitQuiet(
  sampler: TreeSampler,
  opts: { maxMs: number; windowMs?: number; share?: number },
): Promise<number> {
  const windowMs = opts.windowMs ?? 500;
  const share = opts.share ?? 0.1;
  const start = performance.now();
  let prev = sampler.sample(true);
  while (performance.now() - start < opts.maxMs) {
    await new Promise((r) => setTimeout(r, windowMs));
    const cur = sampler.sample();
    const used = (cur.cpuSeconds - prev.cpuSeconds) / ((cur.at - prev.at) / 1000);
    prev = cur;
    if (used < share) break;
  }
  return Math.round(performance.now() - start);
}
