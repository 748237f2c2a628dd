// The real command line as a child process, `airouter <cmd>` from the repository root (through
// the current sources' bundle, ./bundle.ts, unless a script is named), with an explicit
// environment (nothing inherited but PATH and HOME), every wait bounded, and every child killed
// at teardown.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// Shared with the bench, whose children are started the same way.
import { freePort } from '../../bench/lib/http.js';
import { suiteBundle } from './bundle.js';
import { TEST_PASSWORD_HASH_COST } from './stores.js';

export { freePort };

/** What the helpers need of a tap Test: somewhere to register clean-up (the drills pass their own). */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** PATH and HOME, quiet logs, plus `extra`. Values that are undefined are left out. */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LOG_LEVEL: 'silent',
    PASSWORD_HASH_COST: String(TEST_PASSWORD_HASH_COST),
    // Children load TypeScript through tsx; their V8 coverage does not map back onto the
    // sources and corrupts the merged report, so only the test processes record coverage.
    _TAPJS_PROCESSINFO_COVERAGE_: '0',
  };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `airouter ...args` to completion (killed after `timeoutMs`): through the current sources'
 * bundle (./bundle.ts), or `node <script> ...args`.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  script?: string,
): Promise<CliResult> {
  script ??= await suiteBundle();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `airouter ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Non-empty lines of a stream's text. */
export const lines = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '');

export interface ServeChild {
  proc: ChildProcess;
  port: number;
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits (bounded) for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout matches `re` (bounded). */
  waitForStdout(re: RegExp, timeoutMs?: number): Promise<void>;
}

/**
 * `airouter serve` (through the current sources' bundle, or `node <script> serve`) on a free
 * port; resolves once it prints that it is listening. Killed (SIGKILL) at teardown if still
 * running. `node` is this test's own unless another runtime is asked for.
 */
export async function startServe(
  t: Teardown,
  env: Record<string, string>,
  timeoutMs = 30_000,
  script?: string,
  node = process.execPath,
): Promise<ServeChild> {
  script ??= await suiteBundle();
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const proc = spawn(node, [script, 'serve'], {
    cwd: REPO_ROOT,
    env: { HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers = new Set<() => void>();
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of watchers) w();
  });
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
      for (const w of watchers) w();
    });
  });

  const waitForStdout = (re: RegExp, ms = timeoutMs) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (re.test(out)) finish();
        else if (done) finish(new Error(`serve exited before printing ${re}\nstdout: ${out}\nstderr: ${err}`));
      };
      const timer = setTimeout(
        () => finish(new Error(`serve did not print ${re} within ${ms} ms\nstdout: ${out}\nstderr: ${err}`)),
        ms,
      );
      const finish = (e?: Error) => {
        clearTimeout(timer);
        watchers.delete(check);
        if (e) reject(e);
        else resolve();
      };
      watchers.add(check);
      check();
    });

  t.teardown(async () => {
    if (!done) {
      proc.kill('SIGKILL');
      await exited;
    }
  });

  const child: ServeChild = {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStdout,
    async stop(signal = 'SIGTERM', ms = 60_000) {
      if (!done) proc.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`serve did not exit within ${ms} ms of ${signal}\nstderr: ${err}`)),
          ms,
        );
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  await waitForStdout(/airouter listening on /);
  return child;
}

/**
 * How long after `since` a condition came to hold: the start of the first check that found it,
 * in ms. A check that makes two dozen requests to reach every worker takes time of its own, more
 * on a loaded machine, and that time is the test's, not the gateway's. Throws after `timeoutMs`.
 */
export async function heldAfter(since: number, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  let started = since;
  await waitFor(
    () => {
      started = Date.now();
      return check();
    },
    since + timeoutMs - Date.now(),
    10,
  );
  return started - since;
}

/** Polls `fn` until it returns a truthy value, or throws after `timeoutMs`. */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 5000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
