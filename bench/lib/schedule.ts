// The open-loop client's schedule (loadgen.ts), on its own so that it can be tested alone.

/** When each request of an open loop is due (ms from its start); the first `warmupCount` warm up. */
export function openLoopSchedule(rate: number, warmupS: number, durationS: number) {
  const perMs = rate / 1000;
  const warmupMs = warmupS * 1000;
  // Rising evenly to `rate` over the warm-up, n(t) = perMs * t² / (2 * warmupMs) requests have
  // been due by t: half as many as at full rate.
  const warmupCount = Math.ceil((perMs * warmupMs) / 2);
  const total = warmupCount + Math.ceil(rate * durationS);
  const dueAt = (i: number) =>
    i < warmupCount ? Math.sqrt((2 * warmupMs * i) / perMs) : warmupMs + (i - warmupCount) / perMs;
  return { warmupMs, warmupCount, total, dueAt };
}
