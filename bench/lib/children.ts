// Child processes of the bench: started here, waited on for a readiness line, and always
// stopped: on success, on failure, on Ctrl-C, and (as a last resort, synchronously) at exit.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** Set once the process has exited. */
  exited: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Last lines of stderr, for error messages. */
  stderrTail(): string;
  /** Resolves with the first stdout line matching `re` (rejects if the process exits first). */
  waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Called for every stderr line (after it is logged). */
  onStderrLine(fn: (line: string) => void): void;
  stop(timeoutMs?: number): Promise<void>;
}

const live = new Set<Child>();

let fdWrapper: string[] | null | undefined;

/**
 * A prefix that raises the open-file limit of a child (10,000 streams need about 20,000
 * descriptors in one process). `prlimit` when it is allowed to, else nothing.
 */
export function fdLimitPrefix(limit: number): string[] {
  if (fdWrapper !== undefined) return fdWrapper ?? [];
  const probe = spawnSync('prlimit', [`--nofile=${limit}:${limit}`, '--', 'true'], { stdio: 'ignore' });
  fdWrapper = probe.status === 0 ? ['prlimit', `--nofile=${limit}:${limit}`, '--'] : null;
  return fdWrapper ?? [];
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are copied here as well. */
  logFile?: string;
  /** Raise RLIMIT_NOFILE of the child to this (when permitted). */
  nofile?: number;
}

export function startChild(opts: StartOptions): Child {
  const prefix = opts.nofile ? fdLimitPrefix(opts.nofile) : [];
  const [cmd, ...args] = [...prefix, opts.command, ...opts.args];
  const proc = spawn(cmd!, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: WriteStream | undefined = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  const tail: string[] = [];
  const stdoutLines: string[] = [];
  const lineWaiters = new Set<(line: string) => void>();
  const stderrListeners: ((line: string) => void)[] = [];

  const child: Child = {
    name: opts.name,
    proc,
    pid: proc.pid ?? -1,
    exited: null,
    stderrTail: () => tail.join('\n'),
    waitForLine(re, timeoutMs) {
      for (const l of stdoutLines) {
        const m = l.match(re);
        if (m) return Promise.resolve(m);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${opts.name}: no "${re.source}" line within ${timeoutMs} ms${tailNote()}`));
        }, timeoutMs);
        const onLine = (line: string) => {
          const m = line.match(re);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const onExit = () => {
          cleanup();
          reject(
            new Error(
              `${opts.name} exited (code ${child.exited?.code}, signal ${child.exited?.signal}) before it was ready${tailNote()}`,
            ),
          );
        };
        const cleanup = () => {
          clearTimeout(timer);
          lineWaiters.delete(onLine);
          proc.off('exit', onExit);
        };
        lineWaiters.add(onLine);
        if (child.exited) onExit();
        else proc.once('exit', onExit);
      });
    },
    onStderrLine(fn) {
      stderrListeners.push(fn);
    },
    async stop(timeoutMs = 5000) {
      if (child.exited) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!child.exited) proc.kill('SIGKILL');
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
  const tailNote = () => (tail.length ? `\n--- ${opts.name} stderr (last lines) ---\n${tail.join('\n')}` : '');

  splitLines(proc.stdout!, (line) => {
    log?.write(line + '\n');
    if (stdoutLines.length < 200) stdoutLines.push(line);
    for (const w of [...lineWaiters]) w(line);
  });
  splitLines(proc.stderr!, (line) => {
    log?.write(line + '\n');
    tail.push(line);
    if (tail.length > 30) tail.shift();
    for (const l of stderrListeners) l(line);
  });
  live.add(child);
  proc.on('error', (err) => {
    tail.push(`spawn error: ${err.message}`);
  });
  proc.on('exit', (code, signal) => {
    child.exited = { code, signal };
    live.delete(child);
    log?.end();
  });
  return child;
}

function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    let i: number;
    while ((i = rest.indexOf('\n')) !== -1) {
      onLine(rest.slice(0, i).replace(/\r$/, ''));
      rest = rest.slice(i + 1);
    }
    // A child that prints megabytes without a newline must not grow this without bound.
    if (rest.length > 1 << 20) rest = rest.slice(-4096);
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
  });
}

/** Runs a command to completion; stdout and stderr are returned whole. */
export function runCommand(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    proc.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Stops every child still running, in parallel. */
export async function stopAll(timeoutMs = 5000): Promise<void> {
  await Promise.all([...live].map((c) => c.stop(timeoutMs).catch(() => {})));
}

/** Last resort at process exit: no time left for grace. */
export function killAllNow(): void {
  for (const c of live) {
    try {
      c.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
