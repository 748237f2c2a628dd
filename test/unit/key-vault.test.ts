// Provider keys sealed for Postgres: they open under their secret and their own id only, and the
// embedded default makes its secret once, readable by the gateway's user alone.

import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { KeyVault, keyHint, openVault } from '../../src/upstream/key-vault.js';

const SECRET = 'x'.repeat(40);

t.test('sealed keys open under their secret and id only', async (t) => {
  const vault = new KeyVault(SECRET);
  const sealed = vault.seal('sk-live-abcdef123456', 'id-1');
  t.equal(vault.open(sealed, 'id-1'), 'sk-live-abcdef123456');
  t.notOk(sealed.includes(Buffer.from('sk-live')), 'no plain text inside');
  t.not(vault.seal('sk-live-abcdef123456', 'id-1').toString('hex'), sealed.toString('hex'), 'a fresh nonce each time');
  t.throws(() => vault.open(sealed, 'id-2'), { name: 'VaultError' }, 'moved onto another row, it does not open');
  t.throws(
    () => new KeyVault('y'.repeat(40)).open(sealed, 'id-1'),
    { name: 'VaultError' },
    'another secret does not open it',
  );
  const tampered = Buffer.from(sealed);
  tampered[tampered.length - 1]! ^= 1;
  t.throws(() => vault.open(tampered, 'id-1'), { name: 'VaultError' }, 'a changed byte is caught');
  t.throws(() => vault.open(Buffer.from([9, 1, 2]), 'id-1'), { name: 'VaultError' }, 'not a sealed value');
  t.equal(keyHint('sk-live-abcdef123456'), '…3456');
});

t.test('the vault of a configuration', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'airouter-vault-'));
  t.equal(
    openVault({ embedded: false, dataDir: dir }),
    undefined,
    'a shared Postgres without PROVIDER_KEY_SECRET: none',
  );
  const given = openVault({ secret: SECRET, embedded: false, dataDir: dir })!;
  t.equal(given.open(new KeyVault(SECRET).seal('k', 'i'), 'i'), 'k', 'PROVIDER_KEY_SECRET is the key');
  const data = path.join(dir, 'data');
  const first = openVault({ embedded: true, dataDir: data })!;
  const file = path.join(data, 'provider-key.secret');
  t.equal(statSync(file).mode & 0o777, 0o600, "the embedded default's secret is readable by its owner only");
  t.ok(readFileSync(file, 'utf8').length >= 32);
  const sealed = first.seal('sk-embedded', 'k1');
  t.equal(
    openVault({ embedded: true, dataDir: data })!.open(sealed, 'k1'),
    'sk-embedded',
    'made once, the same after a restart',
  );
});
