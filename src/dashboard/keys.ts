// The caller's service keys. The secret is shown once, in the answer to its creation.

import { createKey, listKeys, type KeyRow } from '../accounts/keys.js';
import { nanoToUsd } from '../billing/money.js';
import type { Gateway } from '../services.js';
import type { Exchange } from '../server/exchange.js';
import * as v from 'valibot';
import { conflict, notFound } from './errors.js';
import { PREFIX, readJson, type Reply } from './http.js';
import { CreateKeyBody, parseBody, UpdateKeyBody, Uuid } from './schemas.js';
import { requireSession } from './sessions.js';
import type { KeyListT, KeyT, NewKeyT, RevokedKeyT } from './shapes/keys.js';

const KEY_PATH = `${PREFIX}/keys/`;

/** Live keys per account: generous for real use, a bound for a runaway script. */
export const MAX_LIVE_KEYS = 100;

const limitsJson = (k: KeyRow): Pick<KeyT, 'rpm_limit' | 'spend_limit_usd' | 'spend_limit_period'> => ({
  rpm_limit: k.rpm_limit,
  spend_limit_usd: k.spend_limit_nano === null ? null : nanoToUsd(k.spend_limit_nano),
  spend_limit_period: k.spend_limit_nano === null ? null : k.spend_limit_period,
});

const keyJson = (k: KeyRow): KeyT => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  created_at: k.created_at.toISOString(),
  last_used_at: k.last_used_at?.toISOString() ?? null,
  revoked_at: k.revoked_at?.toISOString() ?? null,
  ...limitsJson(k),
});

/**
 * The key id at the end of the path. The route is a wildcard (see routes.ts): a uuid needs no
 * decoding, and anything else, slashes included, is no key of anyone's. A malformed id and
 * someone else's id get the same answer: nothing to see here.
 */
function keyIdOf(ex: Exchange): string {
  const id = ex.path.slice(KEY_PATH.length);
  if (!v.is(Uuid, id)) throw notFound('No such key.');
  return id.toLowerCase();
}

export function keyHandlers(gw: Gateway) {
  async function list(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const keys = await listKeys(gw.sql, userId);
    const body: KeyListT = { data: keys.map(keyJson) };
    return { status: 200, body };
  }

  async function create(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const { name, limits } = parseBody(CreateKeyBody, await raw);
    const [{ live }] = await gw.sql<{ live: bigint }[]>`
      SELECT count(*) AS live FROM api_keys WHERE user_id = ${userId} AND revoked_at IS NULL AND NOT ephemeral`;
    if (live >= BigInt(MAX_LIVE_KEYS)) {
      throw conflict('too_many_keys', `An account can hold at most ${MAX_LIVE_KEYS} live keys; revoke one first.`);
    }
    const k = await createKey(gw.sql, userId, name, limits);
    const body: NewKeyT = {
      id: k.id,
      name: k.name,
      key: k.key,
      prefix: k.prefix,
      created_at: k.created_at.toISOString(),
      ...limitsJson(k),
    };
    return { status: 201, body };
  }

  async function update(ex: Exchange): Promise<Reply> {
    const raw = readJson(ex);
    const { userId } = await requireSession(gw, ex);
    const id = keyIdOf(ex);
    const changes = parseBody(UpdateKeyBody, await raw);
    const updated = await gw.keys.update(userId, id, changes);
    if (!updated) throw notFound('No such key.');
    return { status: 200, body: keyJson(updated) };
  }

  async function revoke(ex: Exchange): Promise<Reply> {
    const { userId } = await requireSession(gw, ex);
    const revoked = await gw.keys.revoke(userId, keyIdOf(ex));
    if (!revoked) throw notFound('No such key.');
    const body: RevokedKeyT = { id: revoked.id, revoked_at: revoked.revoked_at.toISOString() };
    return { status: 200, body };
  }

  return { list, create, update, revoke };
}
