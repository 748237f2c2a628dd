// The gateway under test, as an operator runs it: `npm start`'s `node dist/airouter.js serve`
// (the compiled bundle; `node src/bin.js serve` for a checkout that has none) in its own process
// (a primary and WORKERS workers when the stores allow), a catalogue file pointing at the bench
// upstreams, and a funded account made with the real CLI beforehand.

import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCommand, startChild, type Child } from './children.js';
import { TreeSampler } from './proc.js';

export const BENCH_MODEL = 'bench-model';
export const STATIC_MODEL = 'bench-static';

export function writeCatalogue(file: string, upstreams: { fake: string; static: string }): void {
  const prices = {
    pricing: { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 },
    official_pricing: { input: 1.25, output: 2.5, cache_read: 0.125, cache_write: 1.5 },
  };
  const catalogue = {
    providers: [
      // No api_key: the fake upstreams accept anything.
      { id: 'fake-openai', dialect: 'openai', base_url: `${upstreams.fake}/v1` },
      { id: 'static-openai', dialect: 'openai', base_url: `${upstreams.static}/v1` },
    ],
    models: [
      // Scripted fake (pacing, long answers): scenarios are chosen by a [[directive]] in the prompt.
      {
        id: BENCH_MODEL,
        owned_by: 'bench',
        display_name: 'Bench (scripted fake)',
        context_window: 100_000,
        max_output_tokens: 4096,
        ...prices,
        routes: [{ provider: 'fake-openai', model: 'bench-upstream' }],
      },
      // Static canned answers, for pure throughput.
      {
        id: STATIC_MODEL,
        owned_by: 'bench',
        display_name: 'Bench (static upstream)',
        context_window: 100_000,
        max_output_tokens: 4096,
        ...prices,
        routes: [{ provider: 'static-openai', model: 'bench-upstream' }],
      },
    ],
  };
  writeFileSync(file, JSON.stringify(catalogue, null, 2));
}

/**
 * What `serve` runs from: the compiled bundle, as `npm start` does (for this checkout it is
 * rebuilt when stale), or the sources through tsx for an older checkout that has no build.
 */
export async function gatewayEntry(root: string): Promise<{ file: string; command: string }> {
  const own = path.resolve(root) === path.resolve(import.meta.dirname, '..', '..');
  if (own) {
    const { buildServer, isFresh } = await import('../../build/server.js');
    if (!isFresh()) await buildServer();
  }
  const bundle = path.join(root, 'dist', 'airouter.js');
  if (existsSync(bundle)) return { file: bundle, command: 'node dist/airouter.js serve' };
  return { file: path.join(root, 'src', 'bin.js'), command: 'node src/bin.js serve' };
}

export interface GatewayOptions {
  dir: string;
  /** The checkout whose gateway is run. */
  root: string;
  /** The file `serve` runs from (gatewayEntry). */
  entry: string;
  env: Record<string, string>;
  workers: number;
  /** Extra node flags for the gateway (cluster workers inherit them), e.g. --cpu-prof. */
  nodeArgs?: string[];
  log: (line: string) => void;
}

/** Creates a funded user and a key through the CLI, as an operator would; returns the key. */
export async function createAccount(opts: GatewayOptions, email: string): Promise<string> {
  const bin = path.join(opts.root, 'src', 'bin.js');
  const env = { ...process.env, ...opts.env };
  const user = await runCommand(
    process.execPath,
    [bin, 'user', 'create', '--email', email, '--balance-usd', '1000000'],
    { cwd: opts.root, env },
  );
  if (user.code !== 0)
    throw new Error(`airouter user create failed (exit ${user.code}): ${(user.stderr || user.stdout).trim()}`);
  const key = await runCommand(process.execPath, [bin, 'key', 'create', '--email', email, '--name', 'bench'], {
    cwd: opts.root,
    env,
  });
  if (key.code !== 0)
    throw new Error(`airouter key create failed (exit ${key.code}): ${(key.stderr || key.stdout).trim()}`);
  const last = key.stdout.trim().split('\n').pop()?.trim() ?? '';
  if (!last.startsWith('ar-'))
    throw new Error(`airouter key create printed no key as its last line: ${JSON.stringify(key.stdout.slice(-200))}`);
  return last;
}

export class GatewayProcess {
  child!: Child;
  url!: string;
  sampler!: TreeSampler;
  /** Worker deaths and primary exits seen since start, for crash detection per scenario. */
  crashes = 0;
  crashNotes: string[] = [];
  starts = 0;
  private stopping = false;

  constructor(
    private readonly opts: GatewayOptions,
    private readonly port: number,
  ) {}

  async start(): Promise<void> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...this.opts.env,
      PORT: String(this.port),
      HOST: '127.0.0.1',
      WORKERS: String(this.opts.workers),
    };
    this.stopping = false;
    this.starts++;
    const child = startChild({
      name: 'gateway',
      command: process.execPath,
      args: [...(this.opts.nodeArgs ?? []), this.opts.entry, 'serve'],
      cwd: this.opts.root,
      env,
      logFile: path.join(this.opts.dir, 'gateway.log'),
      nofile: 65536,
    });
    child.onStderrLine((line) => {
      if (line.includes('worker died')) {
        this.crashes++;
        this.crashNotes.push(line.slice(0, 300));
      }
    });
    child.proc.on('exit', (code, signal) => {
      if (!this.stopping) {
        this.crashes++;
        const hint =
          code === 0 ? ' (a clean exit the bench did not ask for: something outside it stopped the gateway)' : '';
        this.crashNotes.push(
          `gateway process exited (code ${code}, signal ${signal})${hint}: ${child.stderrTail().split('\n').slice(-6).join(' | ').slice(0, 600)}`,
        );
        this.opts.log(`gateway exited unexpectedly (code ${code}, signal ${signal})`);
      }
    });
    this.child = child;
    await child.waitForLine(/airouter listening/, 90_000);
    this.url = `http://127.0.0.1:${this.port}`;
    this.sampler = new TreeSampler(child.pid);
    this.sampler.sample(true);
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exited === null;
  }

  /** Restarts a gateway that died, so later scenarios still run (the crash is already recorded). */
  async ensureRunning(): Promise<void> {
    if (this.alive) return;
    this.opts.log('restarting the gateway for the remaining scenarios');
    await this.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child) await this.child.stop(20_000);
  }
}
