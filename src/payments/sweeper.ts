// Pending deposits past their time become 'expired'. Every gateway process runs one of these;
// the UPDATE is conditional, so they never step on each other. (Reads sweep the reader's own
// deposits first too, so nobody waits for the timer to see an expiry.)

import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { sweepExpired } from './deposits.js';

/** Starts the timer; returns its stop. */
export function startSweeper(sql: Sql, log: Logger, expiryS: number): () => void {
  const everyMs = Math.min(30_000, Math.max(500, (expiryS * 1000) / 2));
  const timer = setInterval(() => {
    sweepExpired(sql).then(
      (n) => {
        if (n > 0) log.info({ expired: n }, 'deposits expired');
      },
      (err: unknown) => log.warn({ err }, 'deposit sweeper: could not expire deposits'),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
