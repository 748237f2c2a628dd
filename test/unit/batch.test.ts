import t from 'tap';
import { Batcher, Turn } from '../../src/store/batch.js';

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

t.test('batchers on one turn flush in one callback, inside its wrapper', async (t) => {
  const log: string[] = [];
  const turn = new Turn((flushAll) => {
    log.push('open');
    flushAll();
    log.push('close');
  });
  const a = new Batcher<number, number>(async (reqs) => (log.push(`a${reqs.join(',')}`), reqs), turn);
  const b = new Batcher<number, number>(async (reqs) => (log.push(`b${reqs.join(',')}`), reqs), turn);
  await Promise.all([a.call(1), b.call(2), a.call(3)]);
  t.same(log, ['open', 'a1,3', 'b2', 'close'], 'both batches run between open and close');
  await b.call(4);
  t.same(log.slice(4), ['open', 'b4', 'close'], 'a later turn has its own callback');
});
