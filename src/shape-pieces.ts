// Pieces of the dashboard API's answer shapes (src/dashboard/shapes/) and of the payment
// providers' invoices (src/payments/<id>/shape.ts), which the dashboard serves. Below both, so
// that a provider's folder never imports the dashboard. No Node imports: the web app takes its
// types from these files.

import * as v from 'valibot';

/** USD as a decimal string with 9 decimals: money never travels as a float. */
export const Money = (what: string) =>
  v.pipe(
    v.string(),
    v.regex(/^-?\d+\.\d{9}$/),
    v.description(`${what} (USD, decimal string, 9 decimals)`),
    v.examples(['12.345678901']),
  );
export const Instant = (what: string) => v.pipe(v.string(), v.isoTimestamp(), v.description(what));
export const NullableInstant = (what: string) => v.nullable(v.pipe(v.string(), v.isoTimestamp(), v.description(what)));
/** A count: tokens, requests, milliseconds. */
export const Count = (what: string) => v.pipe(v.number(), v.integer(), v.minValue(0), v.description(what));
export const Id = v.pipe(v.string(), v.uuid());
