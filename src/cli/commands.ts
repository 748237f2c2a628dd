// The operator commands that work on the stores (API.md "Command line"). They run wherever the
// stores are open: in the `airouter` process itself, or, while a gateway runs, inside that
// gateway, which the command line reaches through its control socket (./control.ts). So one
// body serves both, and a command sees exactly the hot store the gateway serves from.

import { createKey } from '../accounts/keys.js';
import { createVerifiedUser, creditUser, findUserByEmail } from '../accounts/users.js';
import { adjustBalance, setAdmin, setDisabled, setPassword } from '../admin/accounts.js';
import { cliActor, recordAudit } from '../admin/audit.js';
import { saveCatalogue } from '../admin/catalogue.js';
import { createCodes } from '../admin/codes.js';
import { CatalogueError } from '../catalogue/index.js';
import { fileDocument, latestVersion } from '../catalogue/stored.js';
import { readFileSync } from 'node:fs';
import { nanoToUsd, usdToNano } from '../billing/money.js';
import { reconcile } from '../billing/reconcile.js';
import type { Stores } from '../store/index.js';
import { GatewayError } from '../errors.js';
import { StoreError } from '../store/sql.js';
import { parseArgs } from './args.js';
import { CliError, USAGE } from './usage.js';

type Out = (line: string) => void;
type Flags = Record<string, string>;

function need(flags: Flags, name: string): string {
  const v = flags[name];
  if (!v || v === 'true') throw new CliError(`--${name} is required`);
  return v;
}

const optional = (flags: Flags, name: string): string | undefined =>
  flags[name] && flags[name] !== 'true' ? flags[name] : undefined;

function usd(value: string, flag: string): bigint {
  try {
    return usdToNano(value);
  } catch {
    throw new CliError(
      `--${flag} must be a non-negative USD amount with at most 9 decimals (got ${JSON.stringify(value)})`,
    );
  }
}

async function userOf(stores: Stores, email: string) {
  const user = await findUserByEmail(stores.sql, email);
  if (!user) throw new CliError(`no user with email ${email}`);
  return user;
}

/** What a command needs beside the stores: the catalogue file of the process that runs it. */
export interface CommandContext {
  configPath?: string;
}

/** Runs one command (not `serve`, not help) on open stores. */
export async function execute(
  words: string[],
  flags: Flags,
  s: Stores,
  out: Out,
  ctx: CommandContext = {},
): Promise<void> {
  if (words[0] === 'deposit' && words[1] === 'confirm') return confirmDeposit(s, words.slice(2), flags, out);
  const command = words.join(' ');
  switch (command) {
    case 'migrate':
      return out('migrations applied; schema is up to date');
    case 'user create': {
      const email = need(flags, 'email');
      const balance = flags['balance-usd'] ? usd(flags['balance-usd'], 'balance-usd') : 0n;
      if (await findUserByEmail(s.sql, email)) throw new CliError(`a user with email ${email} already exists`);
      const user = await createVerifiedUser(s.sql, email, optional(flags, 'password'));
      if (balance > 0n)
        await creditUser(s.sql, s.hot, user.id, balance, {
          method: 'operator',
          amount: nanoToUsd(balance),
          currency: 'USD',
        });
      await recordAudit(s.sql, cliActor(), {
        action: 'user.create',
        target: user.email,
        after: { balance_usd: nanoToUsd(balance) },
      });
      if (flags.admin === 'true') await setAdmin(s.sql, cliActor(), user.id, true);
      return out(
        `created ${flags.admin === 'true' ? 'admin' : 'user'} ${user.email} (${user.id}) with balance $${nanoToUsd(balance)}`,
      );
    }
    case 'user credit': {
      const user = await userOf(s, need(flags, 'email'));
      const amount = usd(need(flags, 'usd'), 'usd');
      if (amount === 0n) throw new CliError('--usd must be more than 0');
      const reason = optional(flags, 'reason');
      const { balance } = await creditUser(s.sql, s.hot, user.id, amount, {
        method: 'operator',
        amount: nanoToUsd(amount),
        currency: 'USD',
        details: reason ? { reason } : undefined,
      });
      return out(`credited $${nanoToUsd(amount)} to ${user.email}; balance $${nanoToUsd(balance)}`);
    }
    case 'user debit': {
      const user = await userOf(s, need(flags, 'email'));
      const amount = usd(need(flags, 'usd'), 'usd');
      if (amount === 0n) throw new CliError('--usd must be more than 0');
      const { balance } = await adjustBalance(s.sql, s.hot, cliActor(), user.id, -amount, need(flags, 'reason'));
      return out(`debited $${nanoToUsd(amount)} from ${user.email}; balance $${nanoToUsd(balance)}`);
    }
    case 'user promote':
    case 'user demote': {
      const user = await userOf(s, need(flags, 'email'));
      await setAdmin(s.sql, cliActor(), user.id, words[1] === 'promote');
      return out(`${user.email} is ${words[1] === 'promote' ? 'now an admin' : 'no longer an admin'}`);
    }
    case 'user disable':
    case 'user enable': {
      const user = await userOf(s, need(flags, 'email'));
      await setDisabled(s.sql, s.hot, cliActor(), user.id, words[1] === 'disable', optional(flags, 'reason') ?? null);
      return out(
        words[1] === 'disable'
          ? `disabled ${user.email}: its keys stop and its sessions are ended`
          : `enabled ${user.email}`,
      );
    }
    case 'user password': {
      const user = await userOf(s, need(flags, 'email'));
      const given = optional(flags, 'password');
      const password = await setPassword(s.sql, cliActor(), user.id, given);
      out(`set the password of ${user.email}${given ? '' : '; it is the next line (shown once)'}`);
      if (!given) out(password);
      return;
    }
    case 'key create': {
      const user = await userOf(s, need(flags, 'email'));
      const key = await createKey(s.sql, user.id, optional(flags, 'name') ?? '');
      out(`created key ${key.id} (${key.prefix}…) for ${user.email}`);
      return out(key.key);
    }
    case 'codes create': {
      const count = Number(need(flags, 'count'));
      if (!Number.isInteger(count) || count < 1 || count > 1000)
        throw new CliError('--count must be a whole number from 1 to 1000');
      const amount = usd(need(flags, 'usd'), 'usd');
      if (amount === 0n) throw new CliError('--usd must be more than 0');
      const expiresAt = new Date(need(flags, 'expires'));
      if (!(expiresAt.getTime() > Date.now()))
        throw new CliError('--expires must be a date or an ISO-8601 instant in the future');
      const { batchId, codes } = await createCodes(s.sql, cliActor(), {
        count,
        creditNano: amount,
        expiresAt,
        note: optional(flags, 'note') ?? '',
      });
      out(
        `created ${count} codes of $${nanoToUsd(amount)} each, valid until ${expiresAt.toISOString()} (batch ${batchId}); they follow, shown once`,
      );
      for (const c of codes) out(c);
      return;
    }
    case 'catalogue export': {
      const latest = await latestVersion(s.sql);
      return out(JSON.stringify(latest?.doc ?? fileDocument(ctx.configPath), null, 2));
    }
    case 'catalogue import': {
      const file = need(flags, 'file');
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, 'utf8'));
      } catch (err) {
        throw new CliError(`${file}: cannot read it as JSON (${(err as Error).message})`);
      }
      try {
        const version = await saveCatalogue(s.sql, s.hot, cliActor(), doc, {
          action: 'catalogue.import',
          target: null,
          configPath: ctx.configPath,
        });
        return out(`saved catalogue version ${version}; every gateway on these stores serves it now`);
      } catch (err) {
        if (err instanceof CatalogueError) throw new CliError(err.message);
        throw err;
      }
    }
    case 'reconcile': {
      const report = await reconcile(s.sql, s.hot, { full: flags.full === 'true' });
      for (const m of report.mismatches) {
        out(
          `MISMATCH ${m.email}: balance $${nanoToUsd(m.balance_nano)} ≠ credits $${nanoToUsd(m.credits_nano)} − charges $${nanoToUsd(m.charges_nano)} (charged total $${nanoToUsd(m.charged_nano)})`,
        );
      }
      for (const m of report.hotMismatches) {
        out(
          m.expected < 0n
            ? `UNSTABLE ${m.email || m.userId}: its charges kept moving while being compared; run again when quieter`
            : `HOT MISMATCH ${m.email || m.userId}: ${s.hot.kind} balance $${nanoToUsd(m.hot)} ≠ Postgres balance − charges waiting in the outbox = $${nanoToUsd(m.expected)}; reserved $${nanoToUsd(m.reserved)}, live holds $${nanoToUsd(m.holds)}`,
        );
      }
      out(
        `${report.users} users checked, ${report.mismatches.length} mismatches; ${report.hotAccounts} hot accounts checked, ${report.hotMismatches.length} mismatches; ${report.outbox} usage records waiting in the outbox`,
      );
      if (!report.ok) throw new CliError('the ledger does not reconcile');
      return;
    }
    default:
      throw new CliError(`unknown command "${command}"\n${USAGE}`);
  }
}

/**
 * For payments no notification confirms (own-merchant QRIS seen in the bank statement, a
 * notification that never arrived): the same state machine as the notifications, so a deposit
 * is credited once whoever confirms it first.
 */
async function confirmDeposit(s: Stores, ids: string[], flags: Flags, out: Out): Promise<void> {
  if (ids.length !== 1) throw new CliError('usage: airouter deposit confirm ID [--reference R]');
  // Loaded here: the payments code brings an HTTP client that `serve`'s primary never needs.
  const [{ markPaid }, { asDepositId }] = await Promise.all([
    import('../payments/deposits.js'),
    import('../payments/notify.js'),
  ]);
  const id = asDepositId(ids[0]);
  if (!id) throw new CliError(`${JSON.stringify(ids[0])} is not a deposit id`);
  const reference = optional(flags, 'reference') ?? null;
  const o = await markPaid(s.sql, s.hot, id, {
    provider: null,
    reference,
    by: 'operator confirm',
    within: (tx, d, previous) =>
      recordAudit(tx, cliActor(), {
        action: 'deposit.confirm',
        target: d.id,
        reason: reference,
        before: { status: previous },
        after: { status: 'paid', credit_usd: nanoToUsd(d.credit_nano) },
      }),
  });
  if (o.kind === 'missing') throw new CliError(`no deposit ${id}`);
  if (o.kind === 'unchanged')
    throw new CliError(`deposit ${id} is already paid (at ${o.deposit.paid_at?.toISOString()}); nothing credited`);
  if (o.kind === 'refused') throw new CliError(`deposit ${id} not confirmed: ${o.reason}`);
  const [u] = await s.sql<{ email: string }[]>`SELECT email FROM users WHERE id = ${o.deposit.user_id}`;
  const d = o.deposit;
  out(
    `confirmed deposit ${d.id} (${d.method}, ${d.amount} ${d.currency}${o.previous === 'expired' ? ', after it had expired' : ''}): credited $${nanoToUsd(d.credit_nano)} to ${u?.email}; balance $${nanoToUsd(o.balance)}`,
  );
}

/**
 * What a gateway runs for a command that came through its control socket (./control.ts): the
 * same commands on the gateway's own stores.
 */
export function controlRunner(stores: Stores, ctx: CommandContext = {}) {
  return async (argv: string[], out: Out): Promise<void> => {
    const { words, flags } = parseArgs(argv);
    if (words.join(' ') === 'serve') throw new CliError('a gateway is already running on this data directory');
    try {
      await execute(words, flags, stores, out, ctx);
    } catch (err) {
      const known = err instanceof CliError || err instanceof GatewayError || err instanceof StoreError;
      throw known ? err : new Error(`unexpected error: ${(err as Error)?.message ?? String(err)}`);
    }
  };
}
