// Reservation ids are UUIDv7 (src/billing/reservation.ts): the time first, so that usage records'
// settle_ids are appended at the end of their unique index instead of anywhere in it.

import t from 'tap';
import { reservationId } from '../../src/billing/reservation.js';

t.test('a reservation id is a UUIDv7: version, variant, its time in ms, and unique', async (t) => {
  const at = Date.UTC(2026, 11, 4, 12, 0, 0, 123);
  const id = reservationId(at);
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'version 7, RFC 9562 variant');
  t.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), at, 'the first 48 bits are the time');
  const many = Array.from({ length: 100_000 }, (_, i) => reservationId(at + Math.floor(i / 1000)));
  t.equal(new Set(many).size, many.length, '100,000 ids, all different (74 random bits each)');
  t.ok(
    many.every((x, i) => i === 0 || x.slice(0, 13) >= many[i - 1]!.slice(0, 13)),
    'in time order, as text',
  );
  t.ok(reservationId() > reservationId(Date.now() - 1000), 'a later id sorts after an earlier one');
});
