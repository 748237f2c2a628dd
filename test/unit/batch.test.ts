import t from 'tap';
import { Batcher, Coalesced, Turn } from '../../src/store/batch.js';

t.test('calls made in one turn go out together, in order, at most 256 per call', async (t) => {
  const runs: number[][] = [];
  const b = new Batcher<number, number>(async (reqs) => {
    runs.push(reqs);
    return reqs.map((r) => r * 2);
  });
  const results = await Promise.all(Array.from({ length: 300 }, (_, i) => b.call(i)));
  t.same(
    results,
    Array.from({ length: 300 }, (_, i) => i * 2),
  );
  t.same(
    runs.map((r) => r.length),
    [256, 44],
  );
  t.equal(runs[1]![0], 256);
  await b.call(7);
  t.equal(runs.length, 3, 'a later call starts a batch of its own');
});

t.test('a failed batch rejects each of its calls', async (t) => {
  const b = new Batcher<number, number>(async () => {
    throw new Error('store down');
  });
  const all = await Promise.allSettled([b.call(1), b.call(2)]);
  t.same(
    all.map((r) => r.status),
    ['rejected', 'rejected'],
  );
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

t.test('Coalesced: calls for one key share a run while it lasts; forget starts a new one', async (t) => {
  const runs: { key: string; resolve: (v: number) => void }[] = [];
  const c = new Coalesced<number>((key) => new Promise((resolve) => runs.push({ key, resolve })));
  const a = c.call('k');
  const b = c.call('k');
  const other = c.call('j');
  t.equal(runs.length, 2, 'one run per key');
  c.forget('k');
  const d = c.call('k');
  t.equal(runs.length, 3, 'after forget, a new run');
  runs[0]!.resolve(1);
  t.same(await Promise.all([a, b]), [1, 1]);
  const e = c.call('k');
  t.equal(runs.length, 3, 'the forgotten run ending leaves the new one in place');
  runs[2]!.resolve(2);
  t.same(await Promise.all([d, e]), [2, 2]);
  runs[1]!.resolve(3);
  t.equal(await other, 3);
  void c.call('k');
  t.equal(runs.length, 4, 'nothing is kept once a run settled');
});
