// The operator command line (API.md §4). Every command works against the stores the server
// uses and fails with one line and a non-zero exit.

import { createKey } from '../accounts/keys.js';
import { createVerifiedUser, creditUser, findUserByEmail } from '../accounts/users.js';
import { nanoToUsd, usdToNano } from '../billing/money.js';
import { reconcile } from '../billing/reconcile.js';
import { CatalogueError } from '../catalogue/error.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createLogger } from '../log.js';
import { openStores, type Stores } from '../store/index.js';
import { StoreError } from '../store/sql.js';
import { parseArgs } from './args.js';

const USAGE = `usage: airouter <command>
  serve                                              start the gateway
  migrate                                            apply sql/ migrations
  user create --email E [--password P] [--balance-usd N]
  user credit --email E --usd N
  key create --email E [--name N]                    prints the key as the last line
  deposit confirm ID [--reference R]                 mark a pending or expired deposit paid and credit it
  reconcile                                          check balance = credits − charges for every user`;

export class CliError extends Error {}

function need(flags: Record<string, string>, name: string): string {
  const v = flags[name];
  if (!v || v === 'true') throw new CliError(`--${name} is required`);
  return v;
}

function usd(value: string, flag: string): bigint {
  try {
    return usdToNano(value);
  } catch {
    throw new CliError(`--${flag} must be a non-negative USD amount with at most 9 decimals (got ${JSON.stringify(value)})`);
  }
}

async function withStores<T>(config: Config, fn: (s: Stores) => Promise<T>): Promise<T> {
  const stores = await openStores({ ...config });
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

async function userOf(stores: Stores, email: string) {
  const user = await findUserByEmail(stores.sql, email);
  if (!user) throw new CliError(`no user with email ${email}`);
  return user;
}

export async function run(argv: string[], out: (line: string) => void = console.log): Promise<void> {
  const { words, flags } = parseArgs(argv);
  const command = words.join(' ');
  if (command === '' || command === 'help' || flags.help) {
    out(USAGE);
    return;
  }
  const config = loadConfig();
  if (words[0] === 'deposit' && words[1] === 'confirm') return confirmDeposit(config, words.slice(2), flags, out);
  switch (command) {
    case 'serve':
      // Loaded only here: the other commands need none of the server.
      return (await import('./serve.js')).serve(config);
    case 'migrate':
      return withStores(config, async () => out('migrations applied; schema is up to date'));
    case 'user create':
      return withStores(config, async (s) => {
        const email = need(flags, 'email');
        const balance = flags['balance-usd'] ? usd(flags['balance-usd'], 'balance-usd') : 0n;
        if (await findUserByEmail(s.sql, email)) throw new CliError(`a user with email ${email} already exists`);
        const user = await createVerifiedUser(s.sql, email, flags.password);
        if (balance > 0n) await creditUser(s.sql, s.hot, user.id, balance, { method: 'operator', amount: nanoToUsd(balance), currency: 'USD' });
        out(`created user ${user.email} (${user.id}) with balance $${nanoToUsd(balance)}`);
      });
    case 'user credit':
      return withStores(config, async (s) => {
        const user = await userOf(s, need(flags, 'email'));
        const amount = usd(need(flags, 'usd'), 'usd');
        if (amount === 0n) throw new CliError('--usd must be more than 0');
        const { balance } = await creditUser(s.sql, s.hot, user.id, amount, { method: 'operator', amount: nanoToUsd(amount), currency: 'USD' });
        out(`credited $${nanoToUsd(amount)} to ${user.email}; balance $${nanoToUsd(balance)}`);
      });
    case 'key create':
      return withStores(config, async (s) => {
        const user = await userOf(s, need(flags, 'email'));
        const key = await createKey(s.sql, user.id, flags.name && flags.name !== 'true' ? flags.name : '');
        out(`created key ${key.id} (${key.prefix}…) for ${user.email}`);
        out(key.key);
      });
    case 'reconcile':
      return withStores(config, async (s) => {
        const report = await reconcile(s.sql, s.hot);
        for (const m of report.mismatches) {
          out(`MISMATCH ${m.email}: balance $${nanoToUsd(m.balance_nano)} ≠ credits $${nanoToUsd(m.credits_nano)} − charges $${nanoToUsd(m.charges_nano)} (charged total $${nanoToUsd(m.charged_nano)})`);
        }
        for (const m of report.hotMismatches) {
          out(m.expected < 0n
            ? `UNSTABLE ${m.email || m.userId}: its charges kept moving while being compared; run again when quieter`
            : `HOT MISMATCH ${m.email || m.userId}: ${s.hot.kind} balance $${nanoToUsd(m.hot)} ≠ Postgres balance − charges waiting in the outbox = $${nanoToUsd(m.expected)}; reserved $${nanoToUsd(m.reserved)}, live holds $${nanoToUsd(m.holds)}`);
        }
        out(`${report.users} users checked, ${report.mismatches.length} mismatches; ${report.hotAccounts} hot accounts checked, ${report.hotMismatches.length} mismatches; ${report.outbox} usage records waiting in the outbox`);
        if (!report.ok) throw new CliError('the ledger does not reconcile');
      });
    default:
      throw new CliError(`unknown command "${command}"\n${USAGE}`);
  }
}

/**
 * For payments no notification confirms (own-merchant QRIS seen in the bank statement, a
 * notification that never arrived): the same state machine as the notifications, so a deposit
 * is credited once whoever confirms it first.
 */
async function confirmDeposit(config: Config, ids: string[], flags: Record<string, string>, out: (line: string) => void): Promise<void> {
  if (ids.length !== 1) throw new CliError('usage: airouter deposit confirm ID [--reference R]');
  // Loaded here: the payments code brings an HTTP client that `serve`'s primary never needs.
  const [{ markPaid }, { asDepositId }] = await Promise.all([import('../payments/deposits.js'), import('../payments/notify.js')]);
  const id = asDepositId(ids[0]);
  if (!id) throw new CliError(`${JSON.stringify(ids[0])} is not a deposit id`);
  const reference = flags.reference && flags.reference !== 'true' ? flags.reference : null;
  return withStores(config, async (s) => {
    const o = await markPaid(s.sql, s.hot, id, { provider: null, reference, by: 'operator confirm' });
    if (o.kind === 'missing') throw new CliError(`no deposit ${id}`);
    if (o.kind === 'unchanged') throw new CliError(`deposit ${id} is already paid (at ${o.deposit.paid_at?.toISOString()}); nothing credited`);
    if (o.kind === 'refused') throw new CliError(`deposit ${id} not confirmed: ${o.reason}`);
    const [u] = await s.sql<{ email: string }[]>`SELECT email FROM users WHERE id = ${o.deposit.user_id}`;
    const d = o.deposit;
    out(`confirmed deposit ${d.id} (${d.method}, ${d.amount} ${d.currency}${o.previous === 'expired' ? ', after it had expired' : ''}): credited $${nanoToUsd(d.credit_nano)} to ${u?.email}; balance $${nanoToUsd(o.balance)}`);
  });
}

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (err) {
    const known = err instanceof CliError || err instanceof ConfigError || err instanceof StoreError || err instanceof CatalogueError;
    const message = known ? (err as Error).message : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    process.stderr.write(`airouter: ${message}\n`);
    // Exit now: whatever the failure left open (a connection retrying, a timer) must not keep
    // a failed command, or a gateway that could not start, hanging. stderr is synchronous here.
    process.exit(1);
  }
}

export { createLogger };
