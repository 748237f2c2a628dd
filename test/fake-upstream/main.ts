// CLI entry for running the fake upstream as its own process (the bench does, so that its
// load does not share an event loop with the gateway under test):
//   node --import tsx test/fake-upstream/main.ts [--port N] [--host H] [--no-record]
// Prints `listening <url>` once ready; a parent process waits for that line.

import { startFakeUpstream } from './server.js';

function option(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === name) return args[i + 1];
    if (a.startsWith(name + '=')) return a.slice(name.length + 1);
  }
  return undefined;
}

const args = process.argv.slice(2);
const portArg = option(args, '--port');
const port = portArg === undefined ? undefined : Number(portArg);
if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
  process.stderr.write(`bad --port ${portArg}\n`);
  process.exit(2);
}

const upstream = await startFakeUpstream({
  port,
  host: option(args, '--host'),
  // Recording every request of a long bench run would grow without bound.
  record: !args.includes('--no-record') && process.env.FAKE_UPSTREAM_RECORD !== '0',
});
process.stdout.write(`listening ${upstream.url}\n`);

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  upstream.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`fake upstream close failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
