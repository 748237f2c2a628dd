// The months of usage_records (sql/041) and of the daily totals its trigger writes (sql/043). A
// row whose month has no partition yet lands in its table's DEFAULT partition, where it is kept
// but indexed with every other stray month; so each writer makes the partitions up to a month
// past the records it is about to write, once per month of a process's life. Failing to (a lock
// not granted in time, behind a long read of a table) costs nothing but that: the rows go to
// DEFAULT and move when the month is made, a minute later.

import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';

const AHEAD_MS = 31 * 86_400_000;
const RETRY_MS = 60_000;

/** The first instant of the UTC month after the one `ms` falls in. */
export function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export class UsageMonths {
  /** Records created before this have their month's partition. */
  private coveredUntil = -Infinity;
  private retryAt = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log?: Logger,
  ) {}

  /** Makes sure the months up to a month past `latest` exist; never throws. */
  async cover(latest: Date, now = Date.now()): Promise<void> {
    if (latest.getTime() < this.coveredUntil || now < this.retryAt) return;
    const to = latest.getTime() + AHEAD_MS;
    try {
      await this.sql`SELECT usage_months_cover(${latest}, ${new Date(to)})`;
      this.coveredUntil = nextMonthStart(to);
    } catch (err) {
      this.retryAt = now + RETRY_MS;
      this.log?.warn(
        { err },
        'usage records: the next month could not be partitioned yet; its records wait in the default partition',
      );
    }
  }
}
