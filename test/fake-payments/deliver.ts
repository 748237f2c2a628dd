// How the payment providers deliver notifications: POST the body, and if the answer is not an
// acknowledgement, try again later, a bounded number of times. Delays here are milliseconds
// where the real servers wait minutes.

import { request } from 'undici';

export interface Attempt {
  at: number;
  status: number | null;
  body: string;
  error?: string;
}

export interface Delivery {
  url: string;
  /** What was sent, byte for byte. */
  payload: string;
  attempts: Attempt[];
  acknowledged: boolean;
  /** Resolves when acknowledged or out of attempts. */
  done: Promise<Delivery>;
}

export const DEFAULT_RETRY_DELAYS_MS = [25, 50, 100, 200, 400, 800];

export function deliver(
  url: string,
  payload: string,
  isAck: (status: number, body: string) => boolean,
  delaysMs: number[] = DEFAULT_RETRY_DELAYS_MS,
  headers: Record<string, string> = {},
): Delivery {
  const d = { url, payload, attempts: [] as Attempt[], acknowledged: false } as Delivery;
  d.done = (async () => {
    for (let i = 0; i <= delaysMs.length; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, delaysMs[i - 1]));
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: payload,
        });
        const body = await res.body.text();
        d.attempts.push({ at: Date.now(), status: res.statusCode, body });
        if (isAck(res.statusCode, body)) {
          d.acknowledged = true;
          break;
        }
      } catch (err) {
        d.attempts.push({ at: Date.now(), status: null, body: '', error: (err as Error).message });
      }
    }
    return d;
  })();
  return d;
}
