import t from 'tap';
import { Batcher } from '../../src/store/batch.js';

t.test('calls made in one turn go out together, in order, at most 256 per call', async (t) => {
  const runs: number[][] = [];
  const b = new Batcher<number, number>(async (reqs) => {
    runs.push(reqs);
    return reqs.map((r) => r * 2);
  });
  const results = await Promise.all(Array.from({ length: 300 }, (_, i) => b.call(i)));
  t.same(results, Array.from({ length: 300 }, (_, i) => i * 2));
  t.same(runs.map((r) => r.length), [256, 44]);
  t.equal(runs[1]![0], 256);
  await b.call(7);
  t.equal(runs.length, 3, 'a later call starts a batch of its own');
});

t.test('a failed batch rejects each of its calls', async (t) => {
  const b = new Batcher<number, number>(async () => {
    throw new Error('store down');
  });
  const all = await Promise.allSettled([b.call(1), b.call(2)]);
  t.same(all.map((r) => r.status), ['rejected', 'rejected']);
});
