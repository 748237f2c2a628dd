// randomBase62 makes API keys, passwords and answer ids: every character equally likely, from
// the CSPRNG's bytes, none of them used twice, whatever the length (past the pool of random
// bytes it draws from, too).
import t from 'tap';
import { randomBase62 } from '../../src/wire.js';

const ALPHABET = /^[0-9A-Za-z]*$/;

t.test('the asked length, base62 only, a flat string', async (t) => {
  for (const n of [0, 1, 24, 40, 4095, 4096, 10_000]) {
    const s = randomBase62(n);
    t.equal(s.length, n, `${n} characters`);
    t.match(s, ALPHABET, `${n}: base62 only`);
  }
});

t.test('every character equally likely, and no two draws alike', async (t) => {
  const n = 62 * 10_000;
  const counts = new Map<string, number>();
  for (const c of randomBase62(n)) counts.set(c, (counts.get(c) ?? 0) + 1);
  t.equal(counts.size, 62, 'all 62 characters drawn');
  // 10,000 expected each; a binomial's standard deviation here is about 99, so ±5 % is ±5 σ.
  const off = [...counts.values()].filter((k) => Math.abs(k - 10_000) > 500);
  t.same(off, [], 'each within 5 % of its share');
  const ids = new Set(Array.from({ length: 20_000 }, () => randomBase62(24)));
  t.equal(ids.size, 20_000, '20,000 ids, all different');
  // Consecutive draws share no bytes: a pool handed out twice would repeat a run of characters.
  const a = randomBase62(3000);
  const b = randomBase62(3000);
  t.not(a.slice(0, 32), b.slice(0, 32), 'the next draw starts afresh');
});
