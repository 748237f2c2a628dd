// The money of POST /v1/embeddings, on a real gateway with real Postgres and Redis: the charge is
// the upstream's prompt_tokens × the input price exactly (the gateway's own o200k count where the
// upstream says nothing, as Gemini never does), the hold is refused with 402 before anything is
// forwarded, many requests at once never take a balance below zero, a client that leaves still
// pays for what the upstream embedded, key limits apply, and the books reconcile after it all.

import t, { type Test } from 'tap';
import { pino } from 'pino';
import { countTokens } from 'gpt-tokenizer';
import { createKey } from '../../src/accounts/keys.js';
import { reconcile } from '../../src/billing/reconcile.js';
import { fakeInputTokens } from '../fake-upstream/server.js';
import { waitFor } from '../helpers/child.js';
import { embed, NANO_PER_TOKEN, OFFICIAL_NANO_PER_TOKEN, startEmbeddings } from './setup.js';

const lines: Record<string, any>[] = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
const { fake, gw } = await startEmbeddings(t, { log });
const sql = gw.stores.sql;

type Row = {
  request_id: string;
  model: string;
  key_id: string;
  surface: string;
  stream: boolean;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_nano: bigint;
  official_cost_nano: bigint;
  overrun: boolean;
};
const rowsOf = async (userId: string) => {
  await gw.services.outbox.drained();
  return sql<
    Row[]
  >`SELECT request_id, model, key_id, surface, stream, status, prompt_tokens, completion_tokens, cached_tokens, cost_nano, official_cost_nano, overrun
                    FROM usage_records WHERE user_id = ${userId} ORDER BY id`;
};
const balanceOf = async (userId: string) => {
  await gw.services.outbox.drained();
  const [row] = await sql<{ balance_nano: bigint }[]>`SELECT balance_nano FROM users WHERE id = ${userId}`;
  return row!.balance_nano;
};
async function booksReconcile(t: Test) {
  await gw.services.outbox.drained();
  const report = await reconcile(sql, gw.stores.hot);
  t.same(report.mismatches, [], 'Postgres reconciles');
  t.same(report.hotMismatches, [], 'Redis agrees');
  t.equal(report.ok, true, 'reconcile is exact');
}
const upstreamCalls = () =>
  fake.requests.filter((r) => r.path.endsWith('/embeddings') || r.path.endsWith(':batchEmbedContents')).length;

t.test('OpenAI-dialect upstream: charged its prompt_tokens × the input price, to the nano-dollar', async (t) => {
  const u = await gw.user('1');
  const before = await balanceOf(u.userId);
  const input = ['The quick brown fox jumps over the lazy dog.', 'Sphinx of black quartz, judge my vow.'];
  const res = await embed(gw, u.key, { model: 'emb-model', input }, { 'x-request-id': 'embed-exact-1' });
  t.equal(res.status, 200);
  const tokens = input.reduce((n, s) => n + fakeInputTokens(s), 0);
  t.equal(res.json.usage.prompt_tokens, tokens, "the upstream's count, passed on");
  const [row] = await rowsOf(u.userId);
  t.match(row, {
    request_id: 'embed-exact-1',
    model: 'emb-model',
    key_id: u.keyId,
    surface: 'embeddings',
    stream: false,
    status: 200,
    prompt_tokens: tokens,
    completion_tokens: 0,
    cached_tokens: 0,
    overrun: false,
  });
  t.equal(row!.cost_nano, BigInt(tokens) * NANO_PER_TOKEN, 'cost = prompt_tokens × input price');
  t.equal(
    row!.official_cost_nano,
    BigInt(tokens) * OFFICIAL_NANO_PER_TOKEN,
    "official cost at the vendor's list price: the saving shows",
  );
  t.equal(before - (await balanceOf(u.userId)), row!.cost_nano, 'the balance moved by exactly the charge');
  const logged = lines.filter((l) => l.msg === 'inference' && l.requestId === 'embed-exact-1');
  t.equal(logged.length, 1, 'one request log line');
  t.match(logged[0], {
    surface: 'embeddings',
    model: 'emb-model',
    route: 'fake-openai/upstream-emb',
    status: 200,
    inputTokens: tokens,
    outputTokens: 0,
    costNano: String(row!.cost_nano),
  });
  t.notOk(JSON.stringify(lines).includes('quick brown fox'), 'and no input text in the log');
  await booksReconcile(t);
});

t.test("the upstream's count is authoritative: a recorded answer saying 1 token is charged 1 token", async (t) => {
  const u = await gw.user('1');
  const input = 'several words the gateway would count as more than one token';
  t.ok(countTokens(input) > 5, "the gateway's own count would be more");
  const res = await embed(gw, u.key, { model: 'emb-replay', input });
  t.equal(res.status, 200);
  const [row] = await rowsOf(u.userId);
  t.equal(row!.prompt_tokens, 1, 'openai/embeddings/float.json says prompt_tokens 1');
  t.equal(row!.cost_nano, NANO_PER_TOKEN);
});

t.test(
  "Gemini upstream (no usage): charged the gateway's own o200k count, which is the answer's usage too",
  async (t) => {
    const u = await gw.user('1');
    const before = await balanceOf(u.userId);
    const input = ['héllo wörld', '日本語のテキストです', 'emoji 🦊🦊 fox'];
    const res = await embed(gw, u.key, { model: 'emb-gemini', input, encoding_format: 'float' });
    t.equal(res.status, 200);
    t.notOk(fake.requests.at(-1)!.body.usage, 'the upstream said nothing of usage');
    const counted = input.reduce((n, s) => n + countTokens(s), 0);
    t.equal(res.json.usage.prompt_tokens, counted, "usage is the gateway's count");
    const [row] = await rowsOf(u.userId);
    t.equal(row!.prompt_tokens, counted);
    t.equal(row!.cost_nano, BigInt(counted) * NANO_PER_TOKEN);
    t.equal(before - (await balanceOf(u.userId)), row!.cost_nano);
    t.ok(counted < input.reduce((n, s) => n + Buffer.byteLength(s), 0), 'fewer than the bytes held for');
  },
);

t.test('token-array inputs are charged their length; a mixed model routes them past its Gemini route', async (t) => {
  const u = await gw.user('1');
  const res = await embed(gw, u.key, { model: 'emb-mixed', input: [[10, 20, 30], [40]], encoding_format: 'float' });
  t.equal(res.status, 200);
  t.equal(fake.requests.at(-1)!.path, '/v1/embeddings', 'served by the OpenAI-dialect route');
  const [row] = await rowsOf(u.userId);
  t.equal(row!.prompt_tokens, 4);
  t.equal(row!.cost_nano, 4n * NANO_PER_TOKEN);
});

t.test('402 when the hold exceeds the balance, and nothing is forwarded', async (t) => {
  // 10,000 bytes of text plus 4 marker tokens, at 100 nano a token: a hold of 1,000,400 nano.
  const u = await gw.user('0.001');
  const calls = upstreamCalls();
  const res = await embed(gw, u.key, { model: 'emb-model', input: 'a'.repeat(10_000) });
  t.equal(res.status, 402);
  t.match(res.json.error, { type: 'insufficient_quota', code: 'insufficient_balance' });
  t.equal(upstreamCalls(), calls, 'the upstream never saw it');
  const small = await embed(gw, u.key, { model: 'emb-model', input: 'a'.repeat(9_990) });
  t.equal(small.status, 200, 'a hold within the balance (999,400 nano) goes through');
  t.ok((await balanceOf(u.userId)) >= 0n);
  await booksReconcile(t);
});

t.test('many at once against a small balance: never below zero, served no more than it holds', async (t) => {
  // Each request holds (200 + 4) × 100 = 20,400 nano and is charged its ~100 tokens.
  const u = await gw.user('0.0001');
  const input = 'ab '.repeat(66) + 'ab';
  const results = await Promise.all(Array.from({ length: 40 }, () => embed(gw, u.key, { model: 'emb-model', input })));
  const ok = results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 402).length;
  t.equal(ok + refused, 40, `answered (${ok}) or refused with 402 (${refused}), nothing else`);
  t.ok(ok >= 4 && refused > 0, 'both happened');
  const rows = await rowsOf(u.userId);
  t.equal(rows.length, ok, 'a record per answer');
  const spent = rows.reduce((a, r) => a + r.cost_nano, 0n);
  t.equal(spent, BigInt(ok * fakeInputTokens(input)) * NANO_PER_TOKEN, 'each charged its usage exactly');
  const balance = await balanceOf(u.userId);
  t.ok(balance >= 0n, `never below zero (${balance})`);
  t.equal(balance, 100_000n - spent, 'the balance is what was credited less what was charged');
  await booksReconcile(t);
});

t.test('a client that leaves after the request went upstream still pays for the embedded input', async (t) => {
  const u = await gw.user('1');
  const input = 'embed me slowly [[slow:600]]';
  const controller = new AbortController();
  const sent = fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', 'x-request-id': 'embed-abort-1' },
    body: JSON.stringify({ model: 'emb-model', input }),
    signal: controller.signal,
  }).catch((e: Error) => e);
  await waitFor(() => fake.requests.some((r) => r.body?.input === input), 5000);
  controller.abort();
  t.type(await sent, Error, 'the client gave up');
  const row = await waitFor(async () => (await rowsOf(u.userId)).find((r) => r.request_id === 'embed-abort-1'), 10_000);
  t.equal(row!.status, 499, 'recorded as a client abort');
  t.equal(row!.prompt_tokens, fakeInputTokens(input), 'with the input the upstream reported');
  t.equal(row!.cost_nano, BigInt(row!.prompt_tokens) * NANO_PER_TOKEN, 'and charged for it');
  await booksReconcile(t);
});

t.test('fallback: the second route answers, one charge', async (t) => {
  const u = await gw.user('1');
  const calls = upstreamCalls();
  const res = await embed(gw, u.key, { model: 'emb-fallback', input: 'fall back', encoding_format: 'float' });
  t.equal(res.status, 200);
  t.equal(upstreamCalls() - calls, 2, 'the failing route, then the serving one');
  const rows = await rowsOf(u.userId);
  t.equal(rows.length, 1);
  t.equal(rows[0]!.cost_nano, BigInt(fakeInputTokens('fall back')) * NANO_PER_TOKEN);
  const fromGemini = await embed(gw, u.key, {
    model: 'emb-ratelimited',
    input: 'rate limited, then Gemini',
    encoding_format: 'float',
  });
  t.equal(fromGemini.status, 200, 'a 429 hands over to the next route too');
  t.equal(fake.requests.at(-1)!.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
  t.equal(
    (await rowsOf(u.userId))[1]!.prompt_tokens,
    countTokens('rate limited, then Gemini'),
    "billed by the gateway's count there",
  );
});

t.test('key limits apply: requests per minute, and a spend cap', async (t) => {
  const u = await gw.user('1');
  const limited = await createKey(sql, u.userId, 'rpm', { rpm: 2 });
  const statuses = [];
  for (let i = 0; i < 3; i++)
    statuses.push((await embed(gw, limited.key, { model: 'emb-model', input: `rpm ${i}` })).status);
  t.same(statuses, [200, 200, 429], 'the third in the minute is refused');
  // A total cap of 1,000 nano: one 'cap' request holds (3 + 4) × 100 = 700 and is charged 100.
  const capped = await createKey(sql, u.userId, 'cap', { spend: { nano: 1000n, period: 'total' } });
  const first = await embed(gw, capped.key, { model: 'emb-model', input: 'cap' });
  t.equal(first.status, 200);
  const over = await embed(gw, capped.key, {
    model: 'emb-model',
    input: 'a much longer input that the cap cannot cover',
  });
  t.equal(over.status, 429, 'a hold past the cap is refused');
  await booksReconcile(t);
});

t.test('failures charge nothing: every route failing, an upstream 400, a refused request', async (t) => {
  const u = await gw.user('1');
  const before = await balanceOf(u.userId);
  const missing = await embed(gw, u.key, { model: 'emb-gemini-missing', input: 'x' });
  t.equal(missing.status, 502);
  const refused = await embed(gw, u.key, { model: 'emb-upstream-400', input: 'x' });
  t.equal(refused.status, 400);
  const invalid = await embed(gw, u.key, { model: 'emb-model', input: ['ok', ''] });
  t.equal(invalid.status, 400);
  t.same(await rowsOf(u.userId), [], 'no usage record');
  t.equal(await balanceOf(u.userId), before, 'the balance untouched');
  const b = await gw.services.ledger.balance(u.userId);
  t.equal(b.reserved, 0n, 'no hold left behind');
  await booksReconcile(t);
});
