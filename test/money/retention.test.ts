// USAGE_RETENTION_DAYS: the usage log's old requests leave, the totals stay, and the books stay
// exact for `reconcile` incremental and full. Real gateway, Postgres and Redis; the gateway's
// own hourly round, run by moving its clock.

import t from 'tap';
import { reconcile } from '../../src/billing/reconcile.js';
import { retire } from '../../src/billing/retention.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { ManualClock } from '../helpers/clock.js';
import { startTestGateway } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const HOUR = 3_600_000;

async function chat(url: string, key: string, model = 'oa-model') {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  await res.text();
  return res.status;
}

t.test('records older than the setting go, their charges and the totals stay', async (t) => {
  const clock = new ManualClock();
  const gw = await startTestGateway(t, {
    upstream: fake.url,
    clock,
    env: { USAGE_RETENTION_DAYS: '30', REFUSALS_LOGGED_PER_MINUTE: '100' },
  });
  const sql = gw.stores.sql;
  const u = await gw.user('10');
  for (let i = 0; i < 6; i++) t.equal(await chat(gw.url, u.key), 200);
  for (let i = 0; i < 3; i++) t.equal(await chat(gw.url, u.key, 'no-such-model'), 404);
  await gw.services.outbox.drained();
  let refusals = 0;
  for (let i = 0; i < 50 && refusals < 3; i++) {
    [{ n: refusals }] = await sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM refused_requests WHERE user_id = ${u.userId}`;
    if (refusals < 3) await new Promise((r) => setTimeout(r, 100));
  }
  t.equal(refusals, 3, 'three refusals logged');

  // Four records and two refusals made 40 days old; the totals keep the days they were made on.
  const records = await sql<
    { id: bigint; cost_nano: bigint }[]
  >`SELECT id, cost_nano FROM usage_records WHERE user_id = ${u.userId} ORDER BY id`;
  const old = records.slice(0, 4);
  await sql`UPDATE usage_records SET created_at = now() - interval '40 days' WHERE id = ANY(${old.map((r) => r.id.toString())}::bigint[])`;
  await sql`UPDATE refused_requests SET created_at = now() - interval '40 days' WHERE id IN (SELECT id FROM refused_requests WHERE user_id = ${u.userId} ORDER BY id LIMIT 2)`;
  const totals = () =>
    sql<
      { requests: number; cost: bigint }[]
    >`SELECT sum(requests)::int AS requests, sum(cost_nano)::bigint AS cost FROM usage_daily WHERE user_id = ${u.userId}`;
  const totalsBefore = await totals();
  const [before] = await sql<
    { balance_nano: bigint; charged_nano: bigint }[]
  >`SELECT balance_nano, charged_nano FROM users WHERE id = ${u.userId}`;

  await clock.advance(HOUR);
  const left = await sql<{ id: bigint }[]>`SELECT id FROM usage_records WHERE user_id = ${u.userId} ORDER BY id`;
  t.same(
    left.map((r) => r.id),
    records.slice(4).map((r) => r.id),
    'the hourly round deleted the four old records, and only them',
  );
  const [{ n: refusalsLeft }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM refused_requests WHERE user_id = ${u.userId}`;
  t.equal(refusalsLeft, 1, 'and the two old refusals');
  const [retired] = await sql<
    { charges_nano: bigint; records: bigint }[]
  >`SELECT charges_nano, records FROM usage_retired WHERE user_id = ${u.userId}`;
  t.same(
    retired,
    { charges_nano: old.reduce((a, r) => a + r.cost_nano, 0n), records: 4n },
    'their charges are kept, to the nano',
  );
  t.same(await totals(), totalsBefore, 'the daily totals did not move');
  const [after] = await sql<
    { balance_nano: bigint; charged_nano: bigint }[]
  >`SELECT balance_nano, charged_nano FROM users WHERE id = ${u.userId}`;
  t.same(after, before, 'nor the balance and the charged total');

  const incremental = await reconcile(sql, gw.stores.hot);
  t.same([incremental.mismatches, incremental.hotMismatches], [[], []], 'reconcile, incremental: exact');
  const full = await reconcile(sql, gw.stores.hot, { full: true });
  t.same([full.mismatches, full.hotMismatches], [[], []], 'reconcile --full: exact, the retired charges counted');

  // Money keeps moving after a round: new charges and another round still reconcile.
  t.equal(await chat(gw.url, u.key), 200);
  await gw.services.outbox.drained();
  await sql`UPDATE usage_records SET created_at = now() - interval '31 days' WHERE user_id = ${u.userId}`;
  const second = await retire(sql, 30);
  t.equal(second.records, 3, 'a second round takes the rest once they are old');
  const [{ n: none }] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM usage_records WHERE user_id = ${u.userId}`;
  t.equal(none, 0);
  // Incremental first: the record just made was past the checkpoint until this round folded it.
  t.same((await reconcile(sql)).mismatches, [], 'incremental reconcile exact with no record left');
  const again = await reconcile(sql, undefined, { full: true });
  t.same(again.mismatches, [], 'and full');
});

t.test('kept for ever by default', async (t) => {
  const clock = new ManualClock();
  const gw = await startTestGateway(t, { upstream: fake.url, clock });
  const sql = gw.stores.sql;
  const u = await gw.user('10');
  t.equal(await chat(gw.url, u.key), 200);
  await gw.services.outbox.drained();
  await sql`UPDATE usage_records SET created_at = now() - interval '3000 days' WHERE user_id = ${u.userId}`;
  await clock.advance(24 * HOUR);
  const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM usage_records WHERE user_id = ${u.userId}`;
  t.equal(n, 1, 'an eight-year-old record is still there');
});

t.test('the months retention empties are dropped; a month still holding a record stays', async (t) => {
  const gw = await startTestGateway(t, { upstream: fake.url });
  const sql = gw.stores.sql;
  const u = await gw.user('10');
  t.equal(await chat(gw.url, u.key), 200);
  await gw.services.outbox.drained();
  const months = async () =>
    (
      await sql<{ name: string }[]>`
        SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'usage_records'::regclass ORDER BY 1`
    ).map((r) => r.name);
  // Three old months (sql/041): one to hold the record, made 200 days old, and two empty.
  await sql`SELECT usage_records_cover(now() - interval '230 days', now() - interval '170 days')`;
  await sql`UPDATE usage_records SET created_at = now() - interval '200 days' WHERE user_id = ${u.userId}`;
  const [{ held }] = await sql<{ held: string }[]>`
    SELECT tableoid::regclass::text AS held FROM usage_records WHERE user_id = ${u.userId}`;
  const old = (await months()).filter((m) => /_\d{4}_\d{2}$/.test(m) && m < held);
  t.ok(old.length >= 1, `an empty month before the record's (${old.join(', ')})`);
  // Every month that ends before the cutoff and holds nothing: all of them but the record's.
  const cutoff = Date.now() - 30 * 86_400_000;
  const ends = (m: string) => Date.UTC(Number(m.slice(14, 18)), Number(m.slice(19, 21)), 1);
  const expected = (await months()).filter((m) => /_\d{4}_\d{2}$/.test(m) && m !== held && ends(m) <= cutoff);
  const [{ dropped }] = await sql<
    { dropped: number }[]
  >`SELECT usage_records_drop_before(${new Date(cutoff)}) AS dropped`;
  t.equal(dropped, expected.length, `the empty months past the cutoff dropped (${expected.join(', ')})`);
  const left = await months();
  t.ok(left.includes(held), `the month holding the record stays (${held})`);
  t.notOk(
    old.some((m) => left.includes(m)),
    'the empty months before it are gone',
  );
  t.ok(left.includes('usage_records_default'), 'DEFAULT stays');

  // The round retires the record, then drops its month.
  const r = await retire(sql, 30);
  t.equal(r.records, 1);
  t.ok(r.months >= 1, `its month dropped (${r.months})`);
  t.notOk((await months()).includes(held), `${held} gone`);
  const [{ n }] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM usage_records_default`;
  t.equal(n, 0);
  t.same((await reconcile(sql, gw.stores.hot, { full: true })).mismatches, [], 'reconcile --full exact after the drop');
});
