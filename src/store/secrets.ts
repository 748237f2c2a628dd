// Secrets the gateway makes for itself (sql/028_playground_key.sql): made once, by whichever
// process first needs one, and the same for every process after (they all read Postgres).

import { randomBytes } from 'node:crypto';
import type { Sql } from './sql.js';

const caches = new WeakMap<Sql, Map<string, Promise<Buffer>>>();

/** The secret called `name`: 32 random bytes, made on first use. */
export function gatewaySecret(sql: Sql, name: string): Promise<Buffer> {
  let cache = caches.get(sql);
  if (!cache) caches.set(sql, (cache = new Map()));
  let secret = cache.get(name);
  if (!secret) {
    secret = (async () => {
      await sql`INSERT INTO gateway_secrets (name, secret) VALUES (${name}, ${randomBytes(32)}) ON CONFLICT (name) DO NOTHING`;
      const [row] = await sql<{ secret: Buffer }[]>`SELECT secret FROM gateway_secrets WHERE name = ${name}`;
      return row!.secret;
    })();
    // A failed read is tried again next time, not remembered.
    secret.catch(() => cache.delete(name));
    cache.set(name, secret);
  }
  return secret;
}
