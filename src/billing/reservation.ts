// A request's hold on its user's money, from the ledger's reserve (ledger.ts) to its settle
// (settlement.ts): what it is, its id, and the refusal either side answers when a store is down.

import { randomFillSync } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { KeyLimits } from './key-limits.js';
import type { Lease } from './leases.js';

export interface Reservation {
  id: string;
  userId: string;
  keyId: string;
  limits: KeyLimits;
  amount: bigint;
  settled: boolean;
  /** The lease this request's worst case was drawn from, instead of a hold of its own. */
  lease?: Lease;
  /** Its draw was given back to the lease (once, whatever became of the settle). */
  returned?: boolean;
}

export const unavailable = () =>
  new GatewayError('unavailable', 'The gateway cannot check balances right now; try again shortly.');

/** Random bytes for ids, drawn a page at a time: one call into the CSPRNG per 256 ids. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * A new reservation's id: a UUIDv7 (RFC 9562), the time in ms first, then 74 random bits. It is
 * the usage record's `settle_id`, uniquely indexed: ids in time order are added at the end of
 * that index, where random ones each landed on a page of their own among 20M records (one random
 * page read and written per record, as much as the record's own row).
 * Held for as long as its request lasts: reading a character flattens the string (a rope of
 * its pieces otherwise, several times the size), and the check uses the result so that no
 * optimiser drops the read.
 */
export function reservationId(now = Date.now()): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const b = Buffer.allocUnsafe(16);
  b.writeUIntBE(now, 0, 6);
  pool.copy(b, 6, poolAt, poolAt + 10);
  poolAt += 10;
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString('hex');
  const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  if (id.charCodeAt(8) !== 0x2d) throw new Error(`"${id}" is not a UUID`);
  return id;
}
