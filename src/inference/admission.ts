// Fair share for requests that cost their caller nothing or nearly nothing: count_tokens, the
// reads of stored state (GET /v1/responses/{id}, its input items, DELETE). Nothing bills them, so
// nothing else bounds them: one key's loop of 15 MB counts, or of GETs of a stored 8 MB
// answer, would hold a worker's event loop for every other customer. Each key gets, in each
// process, FREE_CONCURRENCY of them at a time and FREE_BYTES_PER_MINUTE of what they move
// (bodies in, stored answers out); past either, 429 with retry-after, decided before the body is
// read (the connection then closes, so the client stops sending, see server/exchange.ts).
//
// The bytes are a bucket that refills at FREE_BYTES_PER_MINUTE a minute and holds a minute's
// worth: a quiet key has its minute at once, a busy one what came back since. One request larger
// than a whole minute's worth is refused outright (413), never queued.

import { systemClock, type Clock } from '../clock.js';
import { GatewayError } from '../errors.js';

export interface AdmissionLimits {
  /** Free requests of one key running at once in this process. */
  concurrency: number;
  /** Bytes those requests may move in a minute, per key, in this process. */
  bytesPerMinute: number;
}

interface KeyShare {
  running: number;
  /** Bytes the bucket held at `at`. */
  bytes: number;
  at: number;
}

/** A request admitted: more of its bytes as they become known, and its end. */
export interface Admitted {
  /** Counts `bytes` more (an answer's size, a body longer than it said); 429 when they do not fit. */
  take(bytes: number): void;
  leave(): void;
}

const IDLE_SWEEP_MS = 60_000;

export class Admission {
  private readonly shares = new Map<string, KeyShare>();
  private lastSweep: number;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastSweep = clock.now();
  }

  /** Lets a free request of `keyId` in, counting the `bytes` it declares; else a 429 (or 413) saying why. */
  enter(keyId: string, bytes: number): Admitted {
    const now = this.clock.now();
    this.sweep(now);
    let share = this.shares.get(keyId);
    if (!share) this.shares.set(keyId, (share = { running: 0, bytes: this.limits.bytesPerMinute, at: now }));
    if (share.running >= this.limits.concurrency) {
      throw new GatewayError('rate_limit', `This key may have at most ${this.limits.concurrency} unbilled requests (count_tokens, reads of stored responses) in progress at once.`, {
        retryAfter: 1,
        code: 'key_concurrency_limit',
      });
    }
    this.spend(share, bytes, now);
    share.running++;
    let left = false;
    return {
      take: (more) => this.spend(share, more, this.clock.now()),
      leave: () => {
        if (left) return;
        left = true;
        share.running--;
      },
    };
  }

  private spend(share: KeyShare, bytes: number, now: number): void {
    if (bytes <= 0) return;
    const { bytesPerMinute } = this.limits;
    if (bytes > bytesPerMinute) {
      throw new GatewayError('too_large', `This request moves ${bytes} bytes; unbilled requests (count_tokens, reads of stored responses) may move at most ${bytesPerMinute} a minute per key.`, {
        code: 'request_too_large',
      });
    }
    const filled = Math.min(bytesPerMinute, share.bytes + ((now - share.at) * bytesPerMinute) / 60_000);
    if (filled < bytes) {
      share.bytes = filled;
      share.at = now;
      const waitMs = ((bytes - filled) * 60_000) / bytesPerMinute;
      throw new GatewayError('rate_limit', `This key's unbilled requests (count_tokens, reads of stored responses) have moved their ${bytesPerMinute} bytes a minute; this one needs ${bytes}.`, {
        retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
        code: 'key_bytes_limit',
      });
    }
    share.bytes = filled - bytes;
    share.at = now;
  }

  /** Forgets keys with nothing running whose bucket is full again: the map holds the busy ones. */
  private sweep(now: number): void {
    if (now - this.lastSweep < IDLE_SWEEP_MS) return;
    this.lastSweep = now;
    for (const [key, share] of this.shares) {
      if (share.running === 0 && share.bytes + ((now - share.at) * this.limits.bytesPerMinute) / 60_000 >= this.limits.bytesPerMinute) this.shares.delete(key);
    }
  }

  /** Keys with a share in memory (for tests). */
  get size(): number {
    return this.shares.size;
  }
}
