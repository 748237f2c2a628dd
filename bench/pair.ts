// Paced streams through several proxies at the same time: the ledger proxy and one or more
// gateway checkouts, each given the same streams on the same ramp in every round. Run one after
// the other (npm run bench), two proxies meet a machine that differs from minute to minute.
// Side by side, whatever the machine does it does to all of them: two identical gateways stayed
// within 2 % of each other in every round, so a change's before and after can be told apart at
// a few per cent (bench/README.md, "Side by side").
//
//   npm run bench:pair -- [--gateway DIR [--env K=V]... [--node-arg FLAG]...]... [--no-ledger] [--cross] [--streams N] [--tokens N]
//                         [--interval-ms MS] [--ramp-per-s N] [--rounds N] [--warmup N] [--out FILE]
//                         [--gateway-node-args ARGS] [--keep-temp] [--perf DIR]
//
// Each gateway (default: this checkout) runs as the bench runs it (bench/lib/gateway.ts) with
// its own database and Redis prefix (DATABASE_URL and REDIS_URL, as the bench takes them; without
// them, embedded stores and one worker each). `--cross` sends the gateways Anthropic clients
// translated to the OpenAI-dialect fake (the ledger proxy then passes OpenAI streams through,
// which is what a translation is measured against). Per round and target: CPU seconds per
// million tokens (its processes), the first process's share of it (a gateway's primary),
// TTFT p50/p99; at the end the median of each over the rounds after the first (which finishes
// the warm-up) and every target's ratio to the first one. `--perf DIR` records each target's
// processes with `perf` over those rounds and splits its CPU by where it went (lib/perf.ts).

import { availableParallelism, tmpdir } from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killAllNow, stopAll } from './lib/children.js';
import { BENCH_MODEL, createAccount, GatewayProcess, gatewayEntry, writeCatalogue } from './lib/gateway.js';
import { freePort, getJson, sleep } from './lib/http.js';
import { CATEGORIES, CATEGORY_TITLES, PerfRecording, perfUnavailable, type Breakdown } from './lib/perf.js';
import { TreeSampler } from './lib/proc.js';
import { startProxy, startUpstream } from './lib/servers.js';
import { prepareStores } from './lib/stores.js';
import { runStreams, type StreamRequest } from './lib/streams.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const T0 = performance.now();
const say = (msg: string) => process.stderr.write(`[pair ${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);

interface Args {
  gateways: { root: string; env: Record<string, string>; nodeArgs: string[] }[];
  ledger: boolean;
  cross: boolean;
  streams: number;
  tokens: number;
  intervalMs: number;
  rampPerS: number;
  rounds: number;
  warmup: number;
  nodeArgs: string[];
  keepTemp: boolean;
  out?: string;
  perf?: string;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    gateways: [],
    ledger: true,
    cross: false,
    streams: 1000,
    tokens: 40,
    intervalMs: 100,
    rampPerS: 500,
    rounds: 5,
    warmup: 2000,
    nodeArgs: [],
    keepTemp: false,
  };
  const num = (v: string | undefined, flag: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a whole number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i]!;
    const v = () => argv[++i];
    if (f === '--gateway') a.gateways.push({ root: path.resolve(v() ?? ''), env: {}, nodeArgs: [] });
    else if (f === '--node-arg') {
      const last = a.gateways.at(-1);
      if (!last) throw new Error('--node-arg follows the --gateway it applies to');
      last.nodeArgs.push(v() ?? '');
    } else if (f === '--env') {
      const [k, ...rest] = (v() ?? '').split('=');
      const last = a.gateways.at(-1);
      if (!last || !k) throw new Error('--env K=V follows the --gateway it applies to');
      last.env[k] = rest.join('=');
    } else if (f === '--no-ledger') a.ledger = false;
    else if (f === '--cross') a.cross = true;
    else if (f === '--streams') a.streams = num(v(), f);
    else if (f === '--tokens') a.tokens = num(v(), f);
    else if (f === '--interval-ms') a.intervalMs = num(v(), f);
    else if (f === '--ramp-per-s') a.rampPerS = num(v(), f);
    else if (f === '--rounds') a.rounds = num(v(), f);
    else if (f === '--warmup') a.warmup = num(v(), f);
    else if (f === '--out') a.out = path.resolve(v() ?? '');
    else if (f === '--gateway-node-args') a.nodeArgs = (v() ?? '').split(' ').filter(Boolean);
    else if (f === '--keep-temp') a.keepTemp = true;
    else if (f === '--perf') a.perf = path.resolve(v() ?? '');
    else throw new Error(`unknown flag ${f}`);
  }
  if (a.gateways.length === 0) a.gateways.push({ root: REPO_ROOT, env: {}, nodeArgs: [] });
  return a;
}

interface Target {
  name: string;
  request: StreamRequest;
  sampler: TreeSampler;
}

interface RoundFigure {
  cpuSPerMTokens: number | null;
  /** The first process's part (the gateway's primary: its usage writer). */
  firstProcessShare: number;
  ttftP50: number;
  ttftP99: number;
  completed: number;
  tokens: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.perf) {
    const why = perfUnavailable();
    if (why) throw new Error(`--perf: ${why}`);
    mkdirSync(args.perf, { recursive: true });
  }
  const tmp = mkdtempSync(path.join(tmpdir(), 'airouter-pair-'));
  const cleanups: (() => Promise<void>)[] = [];
  process.on('exit', killAllNow);
  try {
    const nofile = 65536;
    const { url: fake } = await startUpstream('fake', tmp, nofile);
    const catalogue = path.join(tmp, 'gateway.config.json');
    writeCatalogue(catalogue, { fake, static: fake });
    const directive = `Count for me. [[paced:${args.tokens}:${args.intervalMs}]]`;
    const chat = (model: string) =>
      JSON.stringify({
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: directive }],
      });
    const messages = (model: string) =>
      JSON.stringify({ model, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: directive }] });
    const connections = String(Math.max(args.streams, args.warmup, 1024) * 2);
    const targets: Target[] = [];
    const cores = availableParallelism();

    if (args.ledger) {
      const stores = await prepareStores({
        databaseUrl: process.env.DATABASE_URL || undefined,
        redisUrl: process.env.REDIS_URL || undefined,
        dataDir: path.join(tmp, 'ledger-data'),
      });
      cleanups.push(() => stores.cleanup());
      const workers = stores.env.REDIS_URL ? cores : 1;
      const { child, url } = await startProxy({
        name: 'ledger proxy',
        dir: tmp,
        processes: workers,
        routes: { '/f': fake },
        connections,
        ledger: stores.env.REDIS_URL
          ? { redisUrl: stores.env.REDIS_URL, prefix: `${stores.env.REDIS_PREFIX}ledger:` }
          : 'memory',
        nofile,
      });
      cleanups.unshift(() => child.stop());
      targets.push({
        name: 'ledger',
        request: {
          origin: url,
          path: '/f/v1/chat/completions',
          headers: {},
          body: chat('bench-upstream'),
          marker: '"content":"tok',
        },
        sampler: new TreeSampler(child.pid),
      });
    }

    for (const [i, { root, env: extra, nodeArgs }] of args.gateways.entries()) {
      const dir = path.join(tmp, `gateway-${i}`);
      const stores = await prepareStores({
        databaseUrl: process.env.DATABASE_URL || undefined,
        redisUrl: process.env.REDIS_URL || undefined,
        dataDir: path.join(dir, 'data'),
      });
      cleanups.push(() => stores.cleanup());
      const embedded = stores.kind.sql === 'embedded' || stores.kind.hot === 'embedded';
      const entry = await gatewayEntry(root);
      const env = {
        ...stores.env,
        GATEWAY_CONFIG: catalogue,
        LOG_LEVEL: 'warn',
        SHUTDOWN_TIMEOUT_MS: '3000',
        UPSTREAM_CONNECTIONS: connections,
        ...extra,
      };
      mkdirSync(dir, { recursive: true });
      const opts = {
        dir,
        root,
        entry: entry.file,
        env,
        workers: embedded ? 1 : cores,
        nodeArgs: [...args.nodeArgs, ...nodeArgs],
        log: say,
      };
      const key = await createAccount(opts, `pair-${i}-${Date.now().toString(36)}@bench.invalid`);
      const gateway = new GatewayProcess(opts, await freePort());
      cleanups.unshift(() => gateway.stop());
      await gateway.start();
      const settings = [...Object.entries(extra).map(([k, v]) => `${k}=${v}`), ...nodeArgs].join(' ');
      const name = `gateway ${i + 1} (${path.basename(root)}${settings ? ` ${settings}` : ''})`;
      const request: StreamRequest = args.cross
        ? {
            origin: gateway.url,
            path: '/v1/messages',
            headers: { 'anthropic-version': '2023-06-01', 'x-api-key': key },
            body: messages(BENCH_MODEL),
            marker: '"text":"tok',
          }
        : {
            origin: gateway.url,
            path: '/v1/chat/completions',
            headers: { authorization: `Bearer ${key}` },
            body: chat(BENCH_MODEL),
            marker: '"content":"tok',
          };
      targets.push({ name, request, sampler: gateway.sampler });
      say(`${name}: ${entry.command} in ${root}, ${opts.workers} worker(s), ${stores.description}`);
    }

    const round = async (count: number) => {
      const rampMs = Math.max(50, Math.round((count / args.rampPerS) * 1000));
      const deadlineMs = rampMs + args.tokens * args.intervalMs * 3 + 60_000;
      await fakeIdle(fake);
      const before = targets.map((t) => t.sampler.sample(true));
      const results = await Promise.all(
        targets.map((t) => runStreams({ request: t.request, count, rampMs, tokensPerStream: args.tokens, deadlineMs })),
      );
      // Settles and usage writes trail the last byte: let them land in this round's figure.
      await sleep(1000);
      return targets.map((t, i): RoundFigure => {
        const after = t.sampler.sample(true);
        const cpu = after.cpuSeconds - before[i]!.cpuSeconds;
        const root = after.rootCpuSeconds - before[i]!.rootCpuSeconds;
        const r = results[i]!;
        return {
          cpuSPerMTokens: r.tokens ? Math.round((cpu / (r.tokens / 1e6)) * 10) / 10 : null,
          firstProcessShare: cpu > 0 ? Math.round((root / cpu) * 1000) / 1000 : 0,
          ttftP50: r.ttftMs.p50 ?? NaN,
          ttftP99: r.ttftMs.p99 ?? NaN,
          completed: r.completed,
          tokens: r.tokens,
        };
      });
    };

    if (args.warmup > 0) {
      say(`warm-up: ${args.warmup} streams to each target at once (not measured)`);
      await round(args.warmup);
    }
    const rounds: RoundFigure[][] = [];
    let recordings: PerfRecording[] | undefined;
    for (let r = 1; r <= args.rounds; r++) {
      // Recorded over the rounds the medians count.
      if (args.perf && !recordings && (r === 2 || args.rounds <= 2)) {
        recordings = targets.map(
          (t, i) => new PerfRecording(t.sampler.sample(true).pids, path.join(args.perf!, `target-${i}.perf.data`)),
        );
      }
      const figures = await round(args.streams);
      rounds.push(figures);
      const base = figures[0]!.cpuSPerMTokens;
      say(
        `round ${r}: ${targets.map((t, i) => `${t.name} ${figures[i]!.cpuSPerMTokens} s/Mtok (×${ratioOf(figures[i]!.cpuSPerMTokens, base)}), TTFT ${figures[i]!.ttftP50}/${figures[i]!.ttftP99} ms, ${figures[i]!.completed}/${args.streams}`).join('; ')}`,
      );
    }
    // The first round still finishes the JIT's work on code the warm-up reached late.
    const counted = rounds.length > 2 ? rounds.slice(1) : rounds;
    const summary = targets.map((t, i) => ({
      target: t.name,
      cpu_s_per_million_tokens: median(counted.map((f) => f[i]!.cpuSPerMTokens ?? NaN)),
      ratio_to_first: median(counted.map((f) => (f[i]!.cpuSPerMTokens ?? NaN) / (f[0]!.cpuSPerMTokens ?? NaN))),
      first_process_share: median(counted.map((f) => f[i]!.firstProcessShare)),
      ttft_p50_ms: median(counted.map((f) => f[i]!.ttftP50)),
      ttft_p99_ms: median(counted.map((f) => f[i]!.ttftP99)),
    }));
    const lines = [
      `${args.streams} streams × ${args.tokens} tokens every ${args.intervalMs} ms to each of ${targets.length} targets at once, opened at ${args.rampPerS}/s; ${args.cross ? 'gateways: Anthropic clients translated to the OpenAI-dialect fake' : 'chat, passed through'}; medians of rounds ${rounds.length > 2 ? `2–${rounds.length}` : `1–${rounds.length}`} (Node ${process.version}, ${cores} cores)`,
      `${'target'.padEnd(40)} ${'CPU s/Mtok'.padStart(10)} ${'× first'.padStart(8)} ${'1st proc'.padStart(8)} ${'TTFT p50'.padStart(9)} ${'TTFT p99'.padStart(9)}`,
      ...summary.map(
        (s) =>
          `${s.target.padEnd(40)} ${s.cpu_s_per_million_tokens.toFixed(1).padStart(10)} ${s.ratio_to_first.toFixed(3).padStart(8)} ${(s.first_process_share * 100).toFixed(1).padStart(7)}% ${s.ttft_p50_ms.toFixed(0).padStart(9)} ${s.ttft_p99_ms.toFixed(0).padStart(9)}`,
      ),
    ];
    let where: { target: string; s_per_million_tokens: Breakdown }[] | undefined;
    if (recordings) {
      const breakdowns = await Promise.all(recordings.map((r) => r.stop()));
      const tokens = targets.map((_, i) => counted.reduce((n, f) => n + f[i]!.tokens, 0));
      where = targets.map((t, i) => ({
        target: t.name,
        s_per_million_tokens: Object.fromEntries(
          CATEGORIES.map((c) => [c, tokens[i] ? breakdowns[i]![c] / (tokens[i]! / 1e6) : NaN]),
        ) as Breakdown,
      }));
      lines.push(
        '',
        `where the CPU went (perf cpu-clock samples over the same rounds, every thread; CPU s per million tokens; ${args.perf})`,
        `${'target'.padEnd(40)} ${CATEGORIES.map((c) => CATEGORY_TITLES[c].padStart(8)).join(' ')} ${'sampled'.padStart(8)}`,
        ...where.map((w) => {
          const total = CATEGORIES.reduce((n, c) => n + w.s_per_million_tokens[c], 0);
          return `${w.target.padEnd(40)} ${CATEGORIES.map((c) => w.s_per_million_tokens[c].toFixed(1).padStart(8)).join(' ')} ${total.toFixed(1).padStart(8)}`;
        }),
      );
    }
    process.stdout.write(lines.join('\n') + '\n');
    if (args.out)
      writeFileSync(
        args.out,
        JSON.stringify({ args, targets: targets.map((t) => t.name), rounds, summary, where }, null, 2) + '\n',
      );
  } finally {
    for (const c of cleanups) await c().catch((err: Error) => say(`cleanup: ${err.message}`));
    await stopAll();
    if (args.keepTemp) say(`temp dir kept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

const ratioOf = (x: number | null, base: number | null) =>
  x === null || base === null || base === 0 ? '–' : (x / base).toFixed(3);

/** Waits until the fake upstream has no stream in progress, so rounds do not overlap. */
async function fakeIdle(fake: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const s = await getJson<{ active: number }>(`${fake}/_stats`).catch(() => ({ active: 0 }));
    if (s.active <= 0) return;
    await sleep(200);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    say(`failed: ${(err as Error)?.stack ?? String(err)}`);
    process.exit(1);
  },
);
