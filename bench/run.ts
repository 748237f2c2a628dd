// `npm run bench [-- --quick]`: the gateway's bench suite.
//
// Starts its own upstreams (the scripted fake from test/fake-upstream for streams and slow
// readers, a static uWS upstream for pure throughput), nginx in front of them as a baseline
// when installed, and the gateway itself with `node src/bin.js serve` on the configured stores,
// with an account made through the real CLI. Then runs the scenarios against direct, nginx and
// the gateway, prints tables, and writes bench/reports/<timestamp>.{json,md}. Exits non-zero if
// a scenario could not run, the gateway crashed, or the report is malformed; never for speed.

import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import path from 'node:path';
import { killAllNow, runCommand } from './lib/children.js';
import { sleep } from './lib/http.js';
import { autocannonVersion } from './lib/loadgen.js';
import { HELP, parseOptions, UsageError, type Options, type ScenarioId } from './lib/options.js';
import {
  REPORT_SCHEMA,
  renderMarkdown,
  renderText,
  validateReport,
  type Report,
  type ScenarioReport,
} from './lib/report.js';
import { runtime, runtimeText } from './lib/runtime.js';
import { cleanup, REPO_ROOT, say, T0, TITLES, type ScenarioOutcome } from './suite/context.js';
import { setUp } from './suite/setup.js';
import { scenarioSlowReader } from './suite/slow-readers.js';
import { streamLevels } from './suite/streams.js';
import { summarise } from './suite/summary.js';
import { tables } from './suite/tables.js';
import { scenarioLatency, scenarioThroughput } from './suite/throughput.js';

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    say(`${sig}: stopping every child process and cleaning up (again to force)`);
    void cleanup().finally(() => process.exit(130));
  });
}
process.on('exit', killAllNow);

async function main(): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(process.argv.slice(2), process.env, REPO_ROOT);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (opts === 'help') {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const startedAt = new Date();
  try {
    return await runBench(opts, startedAt);
  } catch (err) {
    // The run could not get as far as its scenarios: still leave a (failed) report behind.
    say(`bench failed: ${(err as Error)?.stack ?? String(err)}`);
    const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
    const report: Report = {
      schema: REPORT_SCHEMA,
      mode: opts.quick ? 'quick' : 'full',
      ok: false,
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      wall_s: Math.round((performance.now() - T0) / 100) / 10,
      command: commandLine(),
      machine: {
        cores: availableParallelism(),
        cpu_model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        runtime: runtime(),
      },
      setup: { gateway: { workers: opts.workers }, shared_cores: true, error: (err as Error)?.message ?? String(err) },
      options: { quick: opts.quick, scenarios: opts.scenarios },
      scenarios: opts.scenarios.map((id) => ({
        id,
        title: TITLES[id],
        status: 'failed' as const,
        error: `setup failed: ${message}`,
        notes: [],
        gateway_crashes: 0,
        wall_s: 0,
        results: {},
      })),
      summary: { ratios: {}, targets: [] },
      problems: [`setup failed: ${message}`],
    };
    const base = writeReport(report, opts, startedAt, [`setup failed: ${(err as Error)?.message ?? String(err)}`]);
    process.stdout.write(`\nbench setup failed: ${message}\nreport: ${base}.json\n`);
    return 1;
  }
}

const commandLine = () => `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

function writeReport(report: Report, opts: Options, startedAt: Date, header: string[]): string {
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const base = opts.out ?? path.join(REPO_ROOT, 'bench', 'reports', `${stamp}${opts.quick ? '-quick' : ''}`);
  mkdirSync(path.dirname(base), { recursive: true });
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  const rendered = report.scenarios.some((s) => s.status !== 'failed' || Object.keys(s.results).length)
    ? tables(report)
    : [];
  writeFileSync(
    `${base}.md`,
    [
      `# airouter bench: ${report.mode} run, ${report.started_at}`,
      '',
      ...header.slice(1).map((h) => `- ${h}`),
      `- command: \`${report.command}\``,
      '',
      ...rendered.map((t) => renderMarkdown(t) + '\n'),
      report.problems.length
        ? `## Problems\n\n${report.problems.map((p) => `- ${p}`).join('\n')}\n`
        : '## Result\n\nEvery selected scenario ran; the report is well-formed.\n',
    ].join('\n'),
  );
  return base;
}

async function runBench(opts: Options, startedAt: Date): Promise<number> {
  const { b, started } = await setUp(opts);
  const { cores, loadBefore, fdNote, childFd, embedded, gatewayEnv, entry, idleRss, nginxInfo } = started;
  const { stores, workers, gateway, fakeChild, nginx, nginxSkipped, wrk } = b;

  const scenarios: ScenarioReport[] = [];
  const runners: Record<ScenarioId, () => Promise<ScenarioOutcome>> = {
    throughput: () => scenarioThroughput(b),
    latency: () => scenarioLatency(b),
    streams: () => streamLevels(b, 'same'),
    cross: () => streamLevels(b, 'cross'),
    slow: () => scenarioSlowReader(b),
  };
  for (const id of ['throughput', 'latency', 'streams', 'cross', 'slow'] as const) {
    if (!opts.scenarios.includes(id)) {
      scenarios.push({
        id,
        title: TITLES[id],
        status: 'skipped',
        notes: ['not selected (--scenarios)'],
        gateway_crashes: 0,
        wall_s: 0,
        results: {},
      });
      continue;
    }
    if (interrupted) break;
    const started = performance.now();
    const crashesBefore = gateway.crashes;
    const notesBefore = gateway.crashNotes.length;
    const report: ScenarioReport = {
      id,
      title: TITLES[id],
      status: 'ok',
      notes: [],
      gateway_crashes: 0,
      wall_s: 0,
      results: {},
    };
    say(`── ${TITLES[id]}`);
    try {
      await gateway.ensureRunning();
      const outcome = await runners[id]();
      report.results = outcome.results;
      report.notes.push(...outcome.notes);
      if (outcome.failures.length) {
        report.status = 'failed';
        report.error = outcome.failures.join('; ');
      }
    } catch (err) {
      report.status = 'failed';
      report.error = (err as Error).message;
      say(`${id} failed: ${(err as Error).stack ?? err}`);
    }
    await sleep(300);
    report.gateway_crashes = gateway.crashes - crashesBefore;
    if (report.gateway_crashes > 0) {
      report.status = 'failed';
      const why = `the gateway crashed ${report.gateway_crashes} time(s) during this scenario`;
      report.error = report.error ? `${why}; ${report.error}` : why;
      report.notes.push(...gateway.crashNotes.slice(notesBefore, notesBefore + 3));
    }
    report.wall_s = Math.round((performance.now() - started) / 100) / 10;
    if (report.status === 'failed') say(`${id}: FAILED: ${report.error}`);
    scenarios.push(report);
  }

  // ---- the report
  const gitHead = await runCommand('git', ['-C', opts.gatewayRoot, 'rev-parse', '--short', 'HEAD']).catch(() => null);
  const gitDirty = await runCommand('git', ['-C', opts.gatewayRoot, 'status', '--porcelain', '--', 'src']).catch(
    () => null,
  );
  const finishedAt = new Date();
  const loadgen = wrk
    ? `${wrk.version} (${opts.wrkThreads} thread${opts.wrkThreads > 1 ? 's' : ''})`
    : autocannonVersion();
  const report: Report = {
    schema: REPORT_SCHEMA,
    mode: opts.quick ? 'quick' : 'full',
    ok: false,
    started_at: startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    wall_s: Math.round((performance.now() - T0) / 100) / 10,
    command: commandLine(),
    machine: {
      cores,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: Math.round(totalmem() / 1024 ** 3),
      kernel: release(),
      node: process.version,
      runtime: runtime(),
      fd_limits: `${fdNote}; ${childFd}`,
      load_average_before: Math.round(loadBefore * 100) / 100,
      load_average_after: Math.round(loadavg()[0]! * 100) / 100,
      load_note:
        loadBefore > cores * 0.5
          ? `the machine was already busy (load ${loadBefore.toFixed(1)} on ${cores} cores) when the run started: figures are skewed by other work`
          : null,
    },
    setup: {
      gateway: {
        command: [entry.command.split(' ')[0], ...opts.gatewayNodeArgs, ...entry.command.split(' ').slice(1)].join(' '),
        root: opts.gatewayRoot,
        commit:
          gitHead?.code === 0
            ? gitHead.stdout.trim() + (gitDirty?.stdout.trim() ? ' + uncommitted changes in src/' : '')
            : 'unknown',
        workers,
        workers_requested: opts.workers,
        workers_note:
          embedded && opts.workers > 1
            ? 'the embedded stores allow one process; set DATABASE_URL and REDIS_URL to use every core'
            : null,
        stores: { ...stores.kind, description: stores.description },
        env: {
          LOG_LEVEL: 'warn',
          UPSTREAM_CONNECTIONS: gatewayEnv.UPSTREAM_CONNECTIONS,
          USAGE_FLUSH_MS: 'default',
          SHUTDOWN_TIMEOUT_MS: '3000',
        },
        starts: gateway.starts,
        idle_rss_mb: {
          processes: idleRss,
          total: Math.round(idleRss.reduce((n, p) => n + p.rss_mb, 0) * 10) / 10,
          pss_total: Math.round(idleRss.reduce((n, p) => n + p.pss_mb, 0) * 10) / 10,
          note: workers > 1 ? 'the first process is the cluster primary' : null,
        },
        profiles: opts.profileDir,
      },
      upstreams: {
        fake: `test/fake-upstream (node:http), own process, pid ${fakeChild.pid}`,
        static: `bench/upstream/static.ts (uWebSockets.js), own process, pid ${started.staticPid}`,
      },
      nginx:
        nginx && nginxInfo
          ? {
              version: nginxInfo.version,
              workers,
              config: 'keepalive upstream, proxy_buffering off, proxy_http_version 1.1',
            }
          : { skipped: nginxSkipped },
      load_generators: {
        closed_loop: loadgen,
        open_loop: 'bench open-loop client (undici Pool, fixed schedule, µs timing)',
        streams: 'bench stream client (undici Pool, one connection per stream)',
        process: 'wrk in its own process; the undici clients (and autocannon) run in the bench process',
      },
      shared_cores: true,
      sharing_note: `Load generators, both upstreams, nginx and the gateway's ${workers} worker(s) all run on this machine's ${cores} cores, unpinned: they compete for CPU, so figures compare paths under the same conditions rather than state capacity.`,
    },
    options: {
      quick: opts.quick,
      scenarios: opts.scenarios,
      duration_s: opts.durationS,
      warmup_s: opts.warmupS,
      concurrency: opts.concurrency,
      rate: opts.rate,
      stream_levels: opts.streamLevels,
      tokens_per_stream: opts.tokensPerStream,
      prompt_kb: opts.promptKb,
      ramp_per_s: opts.rampPerSecond,
      token_interval_ms: opts.tokenIntervalMs ?? 'derived: max(20, streams/10)',
      slow_readers: opts.slowReaders,
      slow_answer_kb: opts.slowAnswerKb,
    },
    scenarios,
    summary: { ratios: {}, targets: [] },
    problems: [],
  };
  report.summary = summarise(report);
  for (const s of scenarios) if (s.status === 'failed') report.problems.push(`${s.id}: ${s.error}`);
  if (interrupted) report.problems.push('interrupted');
  const shape = validateReport(report);
  report.problems.push(...shape.map((p) => `report: ${p}`));
  report.ok = report.problems.length === 0;

  const rendered = tables(report);
  const header = [
    `airouter bench (${report.mode}) ${report.started_at}, ${report.wall_s} s`,
    `machine: ${cores} cores (${report.machine.cpu_model}), ${report.machine.memory_gb} GB, ${runtimeText(runtime())}; load average before ${loadBefore.toFixed(2)}${report.machine.load_note ? ' (BUSY: figures skewed)' : ''}`,
    `gateway: ${(report.setup.gateway as { command: string }).command}, ${workers} worker(s), commit ${(report.setup.gateway as { commit: string }).commit}; stores: ${stores.description}`,
    `load: ${loadgen} closed loop; bench undici clients for fixed rate and streams; nginx: ${nginx && nginxInfo ? `${nginxInfo.version}, ${workers} worker process${workers > 1 ? 'es' : ''}` : nginxSkipped}`,
    `note: ${(report.setup as { sharing_note: string }).sharing_note}`,
  ];
  const base = writeReport(report, opts, startedAt, header);
  process.stdout.write('\n' + header.join('\n') + '\n\n' + rendered.map(renderText).join('\n\n') + '\n\n');
  if (report.problems.length)
    process.stdout.write(`PROBLEMS:\n${report.problems.map((p) => `  - ${p}`).join('\n')}\n\n`);
  process.stdout.write(`report: ${base}.json\n        ${base}.md\n`);
  return report.ok ? 0 : 1;
}

main()
  .then(
    (code) => code,
    (err: unknown) => {
      say(`bench failed: ${(err as Error)?.stack ?? String(err)}`);
      return 1;
    },
  )
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  });
