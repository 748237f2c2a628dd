// The key cache's bound (src/bounded-map.ts): never more than its size, what is read stays.

import t from 'tap';
import { BoundedMap } from '../../src/bounded-map.js';

t.test('holds at most its size; the newest half always stays', async (t) => {
  const m = new BoundedMap<string, number>(100);
  for (let i = 0; i < 1_000; i++) {
    m.set(`k${i}`, i);
    if (m.size > 100) t.fail(`${m.size} entries after ${i + 1}`);
  }
  t.ok(m.size <= 100, `${m.size} entries after 1,000`);
  for (let i = 950; i < 1_000; i++) if (m.get(`k${i}`) !== i) t.fail(`k${i} was let go`);
  t.equal(m.get('k0'), undefined, 'the oldest went');
});

t.test('an entry read stays while those not read go', async (t) => {
  const m = new BoundedMap<string, number>(10);
  m.set('used', 1);
  for (let i = 0; i < 100; i++) {
    m.set(`k${i}`, i);
    t.equal(m.get('used'), 1, `still there after ${i + 1} others`);
  }
  t.equal(m.get('k0'), undefined, 'one never read went');
});

t.test('set replaces, delete forgets in either generation', async (t) => {
  const m = new BoundedMap<string, string>(4);
  m.set('a', '1');
  m.set('b', '2'); // the first generation is full: a and b are the older one now
  m.set('a', '3');
  t.equal(m.get('a'), '3', 'the newer value');
  t.equal(m.size, 2, 'one entry each, not two of a');
  m.delete('a');
  m.delete('b');
  t.equal(m.get('a'), undefined);
  t.equal(m.get('b'), undefined);
  t.equal(m.size, 0);
});
