// The bench's third baseline: a bare proxy on the gateway's own stack (uWebSockets.js and the
// gateway's upstream client, src/upstream/client.ts) with nothing else: no auth, no parsing, no
// billing. The gap between it and the gateway is the gateway's own work; the gap between it and
// nginx is the stack's.
//
//   node --import tsx bench/upstream/bare-proxy.ts --port N --route /s=URL [--route /f=URL]
// A request to /s/v1/chat/completions goes to URL/v1/chat/completions. `--processes N` starts
// N − 1 more copies on the same port (SO_REUSEPORT), as the gateway's workers do, as children
// of this one so that the bench samples them together. Prints `listening <url>`.
//
// `--ledger URL|memory [--ledger-prefix P]` makes it the bench's fourth baseline: each request
// also does what the gateway's hot store does for it (ledger.ts), on that Redis or in process;
// `--ledger-no-lease` reserves each request's hold on its own, as the gateway does with
// LEASE_WINDOW_MS=0.

import { spawn } from 'node:child_process';
import { loadUws } from '../../src/server/uws.js';
import { Cancel } from '../../src/upstream/cancel.js';
import { UpstreamClient, type UpstreamResponse } from '../../src/upstream/client.js';
import { BenchLedger } from './ledger.js';

const uws = loadUws();
const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const routes = new Map<string, string>();
args.forEach((a, i) => {
  if (a !== '--route') return;
  const [prefix, url] = args[i + 1]!.split('=');
  routes.set(prefix!, url!.replace(/\/+$/, ''));
});

const client = new UpstreamClient({
  connectMs: 5000,
  firstByteMs: 120_000,
  idleMs: 120_000,
  connections: Number(option('--connections') ?? 4096),
  idleConnections: 256,
});
const ledgerSpec = option('--ledger');
const ledger = ledgerSpec
  ? BenchLedger.open(
      ledgerSpec,
      option('--ledger-prefix') ?? 'arbench:ledger:',
      !args.includes('--child'),
      !args.includes('--ledger-no-lease'),
    )
  : undefined;
const app = uws.App();

app.post('/*', (res, req) => {
  const url = req.getUrl();
  const slash = url.indexOf('/', 1);
  const base = routes.get(url.slice(0, slash));
  const path = url.slice(slash);
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    if (k === 'content-type' || k === 'accept' || k === 'authorization') headers[k] = v;
  });
  const cancel = new Cancel();
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
    cancel.cancel();
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    if (!base) {
      res.cork(() => res.writeStatus('404 Not Found').end());
      return;
    }
    const body = Buffer.concat(chunks).toString();
    const forward = () => client.post(base + path, headers, body, cancel);
    let answer: Promise<UpstreamResponse>;
    let settled: ((used: boolean) => Promise<void>) | undefined;
    if (ledger) {
      // The gateway's order: the hold before forwarding, the charge before the answer's end.
      const startedAt = performance.now();
      const held = ledger.then(async (l) => ({ l, hold: await l.reserve() }));
      answer = held.then(forward);
      settled = (used) => held.then(({ l, hold }) => l.settle(hold, used, startedAt));
      answer.catch(() => settled!(false).catch(() => {}));
    } else answer = forward();
    answer.then(
      (up) => {
        if (aborted) {
          settled?.(false).catch(() => {});
          return;
        }
        const status = `${up.status} ${up.status === 200 ? 'OK' : ''}`;
        const type = String(up.headers['content-type'] ?? 'application/json');
        res.cork(() => res.writeStatus(status).writeHeader('content-type', type));
        // Bytes through as they come, the socket's backpressure pausing the upstream.
        up.body.consume({
          data: (b) => {
            if (aborted) return;
            let ok = true;
            res.cork(() => (ok = res.write(b)));
            if (!ok) {
              up.body.pause();
              res.onWritable(() => {
                up.body.resume();
                return true;
              });
            }
          },
          end: () => {
            if (!settled) return void (!aborted && res.cork(() => res.end()));
            settled(true).then(
              () => !aborted && res.cork(() => res.end()),
              () => !aborted && res.close(),
            );
          },
          error: () => {
            settled?.(true).catch(() => {});
            if (!aborted) res.close();
          },
        });
      },
      () => !aborted && res.cork(() => res.writeStatus('502 Bad Gateway').end()),
    );
  });
});

const port = Number(option('--port') ?? 0);
const copies = Number(option('--processes') ?? 1);
if (copies > 1 && !args.includes('--child')) {
  const rest = args.filter((a, i) => a !== '--processes' && args[i - 1] !== '--processes');
  for (let i = 1; i < copies; i++) {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...rest, '--child'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    process.on('exit', () => child.kill());
  }
}
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) {
    process.stderr.write(`bare proxy: cannot listen on ${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening http://127.0.0.1:${uws.us_socket_local_port(socket)}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
