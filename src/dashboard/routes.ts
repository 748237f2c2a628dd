import type { Gateway } from '../gateway.js';
import type { Router } from '../server/router.js';

/** The dashboard API (API.md §3). */
export function registerDashboard(_router: Router, _gw: Gateway): void {}
