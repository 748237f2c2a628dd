// The low-balance alert, set and read in the dashboard API (src/admin/alerts.ts). No Node
// imports: the web client takes its types from here.

import * as v from 'valibot';
import { Money, UsdAmount } from './common.js';

export const AlertsBody = v.object({ low_balance_usd: v.nullable(UsdAmount) }, 'must be a JSON object');

/** GET /api/dashboard/alerts: the threshold, and whether the balance is below it (the banner). */
export const Alerts = v.object({ low_balance_usd: v.nullable(Money), below: v.boolean() });
export type AlertsT = v.InferOutput<typeof Alerts>;
