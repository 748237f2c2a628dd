// What the command line prints for help, and its own error: light, so that a command the
// running gateway answers loads nothing else.

export class CliError extends Error {}

export const USAGE = `usage: airouter <command>
  serve                                              start the gateway
  migrate                                            apply sql/ migrations
  user create --email E [--password P] [--balance-usd N] [--admin]
  user credit --email E --usd N [--reason R]
  user debit --email E --usd N --reason R            take money off a balance (never below zero)
  user promote --email E | user demote --email E     give or take the admin role
  user disable --email E [--reason R] | user enable --email E
  user password --email E [--password P]             set a password (printed when generated)
  key create --email E [--name N]                    prints the key as the last line
  codes create --count N --usd A --expires DATE [--note T]   redemption codes, printed once
  catalogue export | catalogue import --file F       the catalogue as its JSON file
  deposit confirm ID [--reference R]                 mark a pending or expired deposit paid and credit it
  reconcile [--full]                                 check balance = credits − charges for every user
                                                     (records since the last run; --full: all of them)

While a gateway runs with the same DATA_DIR, every command is run by that gateway (through
DATA_DIR/airouter.sock); otherwise the command opens the stores itself.`;
