// Latency samples kept whole (a growable Float64Array) and summarised by sorting: exact
// percentiles, no bucket error, and cheap enough for the few hundred thousand samples a run makes.

export class Samples {
  private buf: Float64Array;
  private n = 0;

  constructor(capacity = 1024) {
    this.buf = new Float64Array(Math.max(16, capacity));
  }

  add(value: number): void {
    if (this.n === this.buf.length) {
      const bigger = new Float64Array(this.buf.length * 2);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.n++] = value;
  }

  get count(): number {
    return this.n;
  }

  summary(): Summary {
    return summarise(this.buf.subarray(0, this.n));
  }
}

/** Milliseconds, rounded to the microsecond. null when there were no samples. */
export interface Summary {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function summarise(values: Float64Array): Summary {
  const n = values.length;
  if (n === 0) return { count: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  // Nearest-rank percentile: the smallest sample with at least p of the samples at or below it.
  const at = (p: number) => round3(sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))]!);
  return {
    count: n,
    mean: round3(sum / n),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: round3(sorted[n - 1]!),
  };
}

/** a − b, or null when either is missing. */
export function minus(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  return round3(a - b);
}

export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return Math.round((a / b) * 1000) / 1000;
}

/** CPU microseconds a request, from CPU seconds over a count; null when nothing was counted. */
export const perRequestUs = (cpuS: number, requests: number) =>
  requests > 0 ? Math.round((cpuS / requests) * 1e6) : null;
