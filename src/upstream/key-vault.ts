// Seals provider API keys for Postgres (sql/035_providers.sql): AES-256-GCM under a key derived
// from PROVIDER_KEY_SECRET, so that a copy of the database (a backup, a replica, a dump handed
// to support) carries no usable key. The key's id is bound in as associated data: a sealed
// value copied onto another row does not open.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class VaultError extends Error {
  override name = 'VaultError';
}

/** What the console says when no secret is configured. */
export const NO_SECRET =
  'Provider keys cannot be saved: set PROVIDER_KEY_SECRET (32+ characters, the same on every gateway host, e.g. from `openssl rand -base64 32`) and restart.';

export class KeyVault {
  private readonly key: Buffer;
  constructor(secret: string) {
    // HKDF rather than the secret's bytes: any 32+ character string becomes a uniform key.
    this.key = Buffer.from(hkdfSync('sha256', secret, 'airouter', 'provider keys v1', 32));
  }

  seal(plain: string, id: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(id));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /** The key, or a VaultError when the secret is not the one it was sealed with. */
  open(sealed: Buffer, id: string): string {
    if (sealed[0] !== VERSION || sealed.length < 1 + IV_BYTES + TAG_BYTES)
      throw new VaultError('not a sealed provider key');
    const iv = sealed.subarray(1, 1 + IV_BYTES);
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new VaultError('sealed under another PROVIDER_KEY_SECRET');
    }
  }
}

/**
 * The vault of this configuration: PROVIDER_KEY_SECRET; else, on the embedded Postgres (one
 * host, whose data sits in DATA_DIR already), a secret made once in DATA_DIR; else none, and
 * the console refuses to save keys.
 */
export function openVault(o: { secret?: string; embedded: boolean; dataDir: string }): KeyVault | undefined {
  if (o.secret) return new KeyVault(o.secret);
  if (!o.embedded) return undefined;
  const file = path.join(o.dataDir, 'provider-key.secret');
  if (!existsSync(file)) {
    mkdirSync(o.dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return new KeyVault(readFileSync(file, 'utf8').trim());
}

/** The last four characters, all that is ever shown of a key again. */
export const keyHint = (key: string) => `…${key.slice(-4)}`;
