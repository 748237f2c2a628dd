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
//
// A refusal is cheap, but a client that ignores retry-after and asks again at once can send
// thousands a second, and answering them is the worker's time too: past REFUSALS_PER_SECOND a
// second (times the concurrency), a key's refusals are answered a second late, so such a client
// waits as retry-after told it to. That holds for every refusal of a known key, billed routes'
// too (a broke key's 402, a key past its rpm): see inference/handle.ts.

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
  /** Refusals in the second that began at `refusedSince`. */
  refused: number;
  refusedSince: number;
}

/** A request admitted: more of its bytes as they become known, and its end. */
export interface Admitted {
  /** Counts `bytes` more (an answer's size, a body longer than it said); rejects with a 429 when they do not fit. */
  take(bytes: number): Promise<void>;
  leave(): void;
}

const IDLE_SWEEP_MS = 60_000;
/** Refusals a second, per request the key may have running, answered at once. */
const REFUSALS_PER_SECOND = 8;
const LATE_REFUSAL_MS = 1000;

export class Admission {
  private readonly shares = new Map<string, KeyShare>();
  private readonly counted = new WeakSet<object>();
  private lastSweep: number;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastSweep = clock.now();
  }

  /**
   * Lets a free request of `keyId` in, counting the `bytes` it declares; else rejects with a 429
   * (or 413) saying why, a second late when the key keeps asking regardless.
   */
  async enter(keyId: string, bytes: number): Promise<Admitted> {
    const now = this.clock.now();
    this.sweep(now);
    const share = this.share(keyId, now);
    try {
      if (share.running >= this.limits.concurrency) {
        throw new GatewayError(
          'rate_limit',
          `This key may have at most ${this.limits.concurrency} unbilled requests (count_tokens, reads of stored responses) in progress at once.`,
          {
            retryAfter: 1,
            code: 'key_concurrency_limit',
          },
        );
      }
      this.spend(share, bytes, now);
    } catch (err) {
      return this.refuse(share, err);
    }
    share.running++;
    return this.admitted(share);
  }

  /**
   * Rejects with `err`, a refusal of any request of `keyId` (its balance, its rate): answered a
   * second late past the key's refusals of a second answered at once.
   */
  refused(keyId: string, err: unknown): Promise<never> {
    const now = this.clock.now();
    this.sweep(now);
    return this.refuse(this.share(keyId, now), err);
  }

  private share(keyId: string, now: number): KeyShare {
    let share = this.shares.get(keyId);
    if (!share)
      this.shares.set(
        keyId,
        (share = { running: 0, bytes: this.limits.bytesPerMinute, at: now, refused: 0, refusedSince: now }),
      );
    return share;
  }

  private admitted(share: KeyShare): Admitted {
    let left = false;
    return {
      take: async (more) => {
        try {
          this.spend(share, more, this.clock.now());
        } catch (err) {
          await this.refuse(share, err);
        }
      },
      leave: () => {
        if (left) return;
        left = true;
        share.running--;
      },
    };
  }

  /** Rejects with `err`, a second late past the key's refusals of a second answered at once. */
  private async refuse(share: KeyShare, err: unknown): Promise<never> {
    // A refusal of the share itself passes a second time through the route's own refusal.
    if (typeof err === 'object' && err !== null) {
      if (this.counted.has(err)) throw err;
      this.counted.add(err);
    }
    const now = this.clock.now();
    if (now - share.refusedSince >= 1000) {
      share.refusedSince = now;
      share.refused = 0;
    }
    if (++share.refused > REFUSALS_PER_SECOND * this.limits.concurrency) await this.clock.sleep(LATE_REFUSAL_MS);
    throw err;
  }

  private spend(share: KeyShare, bytes: number, now: number): void {
    if (bytes <= 0) return;
    const { bytesPerMinute } = this.limits;
    if (bytes > bytesPerMinute) {
      throw new GatewayError(
        'too_large',
        `This request moves ${bytes} bytes; unbilled requests (count_tokens, reads of stored responses) may move at most ${bytesPerMinute} a minute per key.`,
        {
          code: 'request_too_large',
        },
      );
    }
    const filled = Math.min(bytesPerMinute, share.bytes + ((now - share.at) * bytesPerMinute) / 60_000);
    if (filled < bytes) {
      share.bytes = filled;
      share.at = now;
      const waitMs = ((bytes - filled) * 60_000) / bytesPerMinute;
      throw new GatewayError(
        'rate_limit',
        `This key's unbilled requests (count_tokens, reads of stored responses) have moved their ${bytesPerMinute} bytes a minute; this one needs ${bytes}.`,
        {
          retryAfter: Math.max(1, Math.ceil(waitMs / 1000)),
          code: 'key_bytes_limit',
        },
      );
    }
    share.bytes = filled - bytes;
    share.at = now;
  }

  /** Forgets keys with nothing running whose bucket is full again: the map holds the busy ones. */
  private sweep(now: number): void {
    if (now - this.lastSweep < IDLE_SWEEP_MS) return;
    this.lastSweep = now;
    for (const [key, share] of this.shares) {
      if (
        share.running === 0 &&
        share.bytes + ((now - share.at) * this.limits.bytesPerMinute) / 60_000 >= this.limits.bytesPerMinute
      )
        this.shares.delete(key);
    }
  }

  /** Keys with a share in memory (for tests). */
  get size(): number {
    return this.shares.size;
  }
}
