// Per-key limits: requests per minute, and a spend cap per UTC day, ISO week, calendar month or
// in total. The hot store counts a capped key's spend in a field of its user's account named
// after the period it belongs to, so a new period starts from zero by itself.

export const SPEND_PERIODS = ['day', 'week', 'month', 'total'] as const;
export type SpendPeriod = (typeof SPEND_PERIODS)[number];

export interface KeyLimits {
  rpm: number | null;
  spendNano: bigint | null;
  spendPeriod: SpendPeriod | null;
}

export const NO_LIMITS: KeyLimits = { rpm: null, spendNano: null, spendPeriod: null };

const DAY_MS = 86_400_000;

/** The instant the period containing `at` began (UTC). */
export function periodStart(period: SpendPeriod, at: Date): Date {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (period) {
    case 'day':
      return new Date(Date.UTC(y, m, d));
    case 'week': {
      // ISO weeks start on Monday.
      const day = new Date(Date.UTC(y, m, d));
      return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY_MS);
    }
    case 'month':
      return new Date(Date.UTC(y, m, 1));
    case 'total':
      return new Date(0);
  }
}

/** When the period containing `at` ends; null for a cap without a period. */
export function periodEnd(period: SpendPeriod, at: Date): Date | null {
  const start = periodStart(period, at);
  switch (period) {
    case 'day':
      return new Date(start.getTime() + DAY_MS);
    case 'week':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
    case 'total':
      return null;
  }
}

/** The account field counting `keyId`'s spend in the period containing `at`. */
export function spendField(keyId: string, period: SpendPeriod, at: Date): string {
  return `k:${keyId}:${period === 'total' ? 't' : periodStart(period, at).toISOString().slice(0, 10)}`;
}

/** The same for the period before, whose field is dropped once the new one has a charge. */
export function previousSpendField(keyId: string, period: SpendPeriod, at: Date): string | undefined {
  if (period === 'total') return undefined;
  return spendField(keyId, period, new Date(periodStart(period, at).getTime() - 1));
}
