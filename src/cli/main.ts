// The operator command line (API.md "Command line"). Every command works against the stores the
// server uses, through a running gateway when there is one (./control.ts), and fails with one
// line and a non-zero exit. This file stays light: a command answered by the gateway loads
// neither the stores nor the accounts code.

import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { CatalogueError } from '../catalogue/error.js';
import { ConfigError, loadConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import { StoreError } from '../store/sql.js';
import { parseArgs } from './args.js';
import { CliError, USAGE } from './usage.js';
import { RemoteCommandError, runInGateway, storesOf } from './control.js';

export { CliError };

export async function run(argv: string[], out: (line: string) => void = console.log): Promise<void> {
  const { words, flags } = parseArgs(argv);
  const command = words.join(' ');
  if (command === '' || command === 'help' || flags.help) {
    out(USAGE);
    return;
  }
  const config = loadConfig();
  if (command === 'serve') {
    // Loaded only here: the other commands need none of the server.
    return (await import('./serve.js')).serve(config);
  }
  // A file named to the command is read by whichever process runs it: give it a path that
  // does not depend on that process's working directory.
  const sent = argv.map((a, i) =>
    argv[i - 1] === '--file' ? path.resolve(a) : a.startsWith('--file=') ? `--file=${path.resolve(a.slice(7))}` : a,
  );
  if (await runInGateway(config.dataDir, storesOf(config), sent, out)) return;
  const [{ openStores }, { execute }, { setPasswordHashCost }] = await Promise.all([
    import('../store/index.js'),
    import('./commands.js'),
    import('../accounts/passwords.js'),
  ]);
  setPasswordHashCost(config.PASSWORD_HASH_COST);
  // A command on the embedded store runs a few statements in PGlite and exits: V8's optimizing
  // tier would compile Postgres's hot WebAssembly again, in every such process, for nothing
  // (`airouter reconcile` on a data directory: 3.2 CPU s with it, 1.5 without). Set before the
  // module is compiled; the gateway (`serve`) keeps the default.
  if (!config.DATABASE_URL) setFlagsFromString('--liftoff-only');
  const stores = await openStores({ ...config });
  try {
    await execute(words, flags, stores, out, { configPath: config.GATEWAY_CONFIG });
  } finally {
    await stores.close();
  }
}

const known = (err: unknown) =>
  err instanceof CliError ||
  err instanceof ConfigError ||
  err instanceof StoreError ||
  err instanceof CatalogueError ||
  err instanceof RemoteCommandError ||
  err instanceof GatewayError;

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (err) {
    const message = known(err) ? (err as Error).message : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    process.stderr.write(`airouter: ${message}\n`);
    // Exit now: whatever the failure left open (a connection retrying, a timer) must not keep
    // a failed command, or a gateway that could not start, hanging. stderr is synchronous here.
    process.exit(1);
  }
}
