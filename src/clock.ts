// Time as the gateway's own timed work reads it: the wall clock, and timers that repeat. One
// object, passed to what keeps time (leases, alerts), so that their tests move time on instead
// of sleeping through it. What Redis or Postgres times (a hold's TTL, `now()` in a query) keeps
// their clock.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `fn` every `ms` until the returned function is called. The timer does not keep the
   * process alive; what `fn` returns (a promise) is the round, for a clock that waits for it.
   */
  every(ms: number, fn: () => unknown): () => void;
  /** Resolves `ms` from now. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
