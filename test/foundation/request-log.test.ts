// One `info` line per inference request, answered or refused: who, where, what it cost, and
// never the prompt, the answer or a key.

import t from 'tap';
import { pino } from 'pino';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';

const lines: Record<string, any>[] = [];
const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url, log });

const SECRET_PROMPT = 'my secret prompt text';
const post = (path: string, key: string, body: object) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const inference = () => lines.filter((l) => l.msg === 'inference');

t.test('answered, refused for money, refused for the key, on three surfaces', async (t) => {
  const u = await gw.user('1');
  const poor = await gw.user('0.000001');
  await (
    await post('/v1/chat/completions', u.key, {
      model: 'oa-model',
      messages: [{ role: 'user', content: SECRET_PROMPT }],
    })
  ).text();
  await (
    await post('/v1/messages', u.key, {
      model: 'oa-model',
      max_tokens: 10,
      stream: true,
      messages: [{ role: 'user', content: SECRET_PROMPT }],
    })
  ).text();
  await (
    await post('/v1/chat/completions', poor.key, {
      model: 'oa-model',
      messages: [{ role: 'user', content: SECRET_PROMPT }],
    })
  ).text();
  await (await post('/v1/responses', 'ar-not-a-key', { model: 'oa-model', input: SECRET_PROMPT })).text();
  const [chat, messages, refused, unknown] = inference();
  t.match(chat, {
    surface: 'chat',
    model: 'oa-model',
    route: 'fake-openai/upstream-oa',
    status: 200,
    userId: u.userId,
    keyId: u.keyId,
  });
  t.ok(
    chat.inputTokens > 0 && chat.outputTokens > 0 && BigInt(chat.costNano) > 0n && chat.latencyMs >= 0,
    'tokens, cost and latency',
  );
  t.match(messages, { surface: 'messages', status: 200, route: 'fake-openai/upstream-oa' });
  t.type(messages.ttftMs, 'number', 'a stream says when its first token came');
  t.match(refused, { surface: 'chat', status: 402, error: 'insufficient_balance', userId: poor.userId });
  t.match(unknown, { surface: 'responses', status: 401, error: 'authentication' });
  t.equal(inference().length, 4, 'one line each');
  const all = JSON.stringify(lines);
  t.notOk(all.includes(SECRET_PROMPT), 'no prompt text');
  t.notOk(all.includes(u.key) || all.includes(poor.key), 'no key');
  t.notOk(all.includes('Hello from the fake upstream'), 'no answer text');
});
