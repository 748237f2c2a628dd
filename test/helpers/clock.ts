// A clock the test moves: leases and alerts (src/clock.ts) read its time and run their timers
// when it is moved past them, so a test waits for no window, round or hand-back in real time.

import type { Clock } from '../../src/clock.js';

interface Timer {
  every: number;
  next: number;
  fn: () => unknown;
}

export class ManualClock implements Clock {
  private t = Date.now();
  private readonly timers = new Set<Timer>();

  now(): number {
    return this.t;
  }

  /** Resolves once the clock has been moved `ms` on. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const stop = this.every(ms, () => {
        stop();
        resolve();
      });
    });
  }

  every(ms: number, fn: () => unknown): () => void {
    const timer = { every: ms, next: this.t + ms, fn };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  /**
   * Moves time on by `ms`: every timer runs as often as it falls due on the way, in time order,
   * each round awaited before the next, as the real timers' rounds would be apart.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let due: Timer | undefined;
      for (const timer of this.timers) if (timer.next <= end && (!due || timer.next < due.next)) due = timer;
      if (!due) break;
      this.t = due.next;
      due.next += due.every;
      await due.fn();
    }
    this.t = end;
  }
}
