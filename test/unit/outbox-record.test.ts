import t from 'tap';
import { decodeRecord, encodeRecord, type OutboxRecord } from '../../src/store/hot.js';

const record: OutboxRecord = {
  settleId: 'res_1',
  userId: 'u1',
  keyId: null,
  requestId: 'req_1',
  model: 'oa-model',
  surface: 'messages',
  stream: true,
  status: 499,
  promptTokens: 12,
  completionTokens: 3,
  cachedTokens: 2,
  cacheWriteTokens: 1,
  costNano: 12345678901234567n,
  officialCostNano: 2n,
  latencyMs: 40,
  ttftMs: null,
  overrun: true,
  createdAt: new Date('2026-11-23T10:00:00.123Z'),
};

t.test('a record survives the outbox encoding, every field', async (t) => {
  t.same(decodeRecord(encodeRecord(record)), record);
  t.same(decodeRecord(encodeRecord({ ...record, stream: false, overrun: false, ttftMs: 7, keyId: 'k1' })), {
    ...record,
    stream: false,
    overrun: false,
    ttftMs: 7,
    keyId: 'k1',
  });
});

t.test('records written by the earlier named layout still decode', async (t) => {
  const old = JSON.stringify({
    ...record,
    costNano: record.costNano.toString(),
    officialCostNano: '2',
    createdAt: record.createdAt.toISOString(),
  });
  t.same(decodeRecord(old), record);
});

t.test("the answering route travels last, and an older gateway's entry (without it) decodes with none", async (t) => {
  const routed = { ...record, route: 'fake-openai/upstream-oa' };
  const text = encodeRecord(routed);
  t.equal(JSON.parse(text).at(-1), 'fake-openai/upstream-oa', 'appended at the end of the layout');
  t.strictSame(decodeRecord(text), routed);
  // What a gateway before sql/034 wrote: the same array, one shorter.
  const older = JSON.stringify(JSON.parse(text).slice(0, -1));
  const decoded = decodeRecord(older);
  t.equal(decoded.route ?? null, null, 'no route');
  t.strictSame(decoded, record, 'every other field as it was');
  t.equal(JSON.parse(encodeRecord(record)).at(-1), null, 'a record made without one is written with none');
});
