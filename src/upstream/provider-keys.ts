// The API key each upstream call carries. A provider's keys saved in the console (Postgres,
// sealed; sql/035_providers.sql) come first: one is picked per call by weight, and a key the
// vendor refused sits out a cool-down while the provider has others. A provider without saved
// keys takes the environment variable its catalogue entry names (`api_key.env`), as before;
// one that names none is called without a key (a local server).
//
// Every gateway process holds the opened keys in memory and reads them again when an admin
// changes one (a hot-store message), so the request path never touches Postgres for a key.

import type { Logger } from 'pino';
import type { Provider } from '../catalogue/index.js';
import type { Bus } from '../store/hot.js';
import type { Sql } from '../store/sql.js';
import { VaultError, type KeyVault } from './key-vault.js';

export const PROVIDER_KEYS_CHANNEL = 'provider-keys-saved';

/** The key for one call: `value` undefined when the provider takes none. */
export interface PickedKey {
  value: string | undefined;
  /** The saved key's id; absent for the environment's. */
  id?: string;
  /** How the operator knows the key: `…abcd` (saved) or the variable's name. */
  label: string;
}

/** Why no key: the operator's to fix. */
export interface NoKey {
  missing: string;
}

interface Held {
  id: string;
  value: string;
  weight: number;
  label: string;
}

export interface SavedKeyRow {
  id: string;
  provider_id: string;
  label: string;
  sealed: Buffer;
  hint: string;
  weight: number;
  enabled: boolean;
}

export class ProviderKeys {
  private byProvider = new Map<string, Held[]>();
  /** Saved keys that could not be opened (another PROVIDER_KEY_SECRET), per provider. */
  private sealedAway = new Map<string, number>();
  private readonly refusedUntil = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    readonly vault: KeyVault | undefined,
    private readonly log: Logger,
    private readonly cooldownMs: number,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Reads the keys now and whenever an admin saves one. */
  async start(hot: Bus): Promise<void> {
    await hot.subscribe(PROVIDER_KEYS_CHANNEL, () => {
      this.load().catch((err: unknown) => this.log.error({ err }, 'could not read the provider keys'));
    });
    await this.load();
  }

  async load(): Promise<void> {
    const rows = await this.sql<SavedKeyRow[]>`
      SELECT id, provider_id, label, sealed, hint, weight, enabled FROM provider_keys WHERE enabled ORDER BY provider_id, created_at, id`;
    const next = new Map<string, Held[]>();
    const away = new Map<string, number>();
    for (const r of rows) {
      let value: string;
      try {
        if (!this.vault) throw new VaultError('PROVIDER_KEY_SECRET is not set');
        value = this.vault.open(r.sealed, r.id);
      } catch (err) {
        if (!(err instanceof VaultError)) throw err;
        away.set(r.provider_id, (away.get(r.provider_id) ?? 0) + 1);
        continue;
      }
      const list = next.get(r.provider_id) ?? [];
      list.push({ id: r.id, value, weight: r.weight, label: keyLabel(r.label, r.hint) });
      next.set(r.provider_id, list);
    }
    for (const [provider, n] of away) {
      this.log.error(
        { provider },
        `${n} saved key(s) of provider "${provider}" cannot be opened: PROVIDER_KEY_SECRET is unset or not the one they were saved with`,
      );
    }
    this.byProvider = next;
    this.sealedAway = away;
  }

  /** How many saved keys of this provider are in use, and how many cannot be opened. */
  saved(providerId: string): { usable: number; unopened: number } {
    return { usable: this.byProvider.get(providerId)?.length ?? 0, unopened: this.sealedAway.get(providerId) ?? 0 };
  }

  /** The key for the next call to `provider`, or why there is none. */
  pick(provider: Pick<Provider, 'id' | 'apiKeyEnv'>, now = Date.now()): PickedKey | NoKey {
    const keys = this.byProvider.get(provider.id);
    if (keys && keys.length > 0) return this.weighted(keys, now);
    if (this.sealedAway.has(provider.id))
      return {
        missing: `provider "${provider.id}" has saved keys that cannot be opened: PROVIDER_KEY_SECRET is unset or not the one they were saved with`,
      };
    const env = provider.apiKeyEnv;
    if (!env) return { value: undefined, label: 'none' };
    const value = this.env[env];
    if (!value)
      return {
        missing: `provider "${provider.id}" has no API key: add one in the console, or set ${env} in the gateway's environment`,
      };
    return { value, label: env };
  }

  /** The vendor refused this key: others of the provider go first for a while. */
  refused(key: PickedKey, now = Date.now()): void {
    if (key.id && this.cooldownMs > 0) this.refusedUntil.set(key.id, now + this.cooldownMs);
  }

  private weighted(keys: Held[], now: number): PickedKey {
    const live = keys.length === 1 ? keys : keys.filter((k) => (this.refusedUntil.get(k.id) ?? 0) <= now);
    // Every key refused lately: still try one, the vendor may have taken it back.
    const pool = live.length > 0 ? live : keys;
    let total = 0;
    for (const k of pool) total += k.weight;
    let at = Math.random() * total;
    for (const k of pool) {
      at -= k.weight;
      if (at < 0) return { value: k.value, id: k.id, label: k.label };
    }
    const last = pool[pool.length - 1]!;
    return { value: last.value, id: last.id, label: last.label };
  }
}

/** How a saved key is named to the operator: its label and hint, or the hint alone. */
export const keyLabel = (label: string, hint: string) => (label ? `${label} (${hint})` : hint);

export const isNoKey = (k: PickedKey | NoKey): k is NoKey => 'missing' in k;

/** A provider header's value: as written, or from the environment variable it names. */
function resolveSecret(v: string | { env: string }): string {
  return typeof v === 'string' ? v : (process.env[v.env] ?? '');
}

/** Adds the provider's own headers (the catalogue's `headers`, e.g. an org id) to a call's. */
export function addProviderHeaders(
  headers: Record<string, string>,
  provider: Pick<Provider, 'headers'>,
): Record<string, string> {
  for (const [k, v] of Object.entries(provider.headers)) headers[k.toLowerCase()] = resolveSecret(v);
  return headers;
}
