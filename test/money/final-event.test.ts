// "An answer that reached the client has its charge recorded": a stream's final event
// ([DONE], message_stop) is held until its settle has returned (src/inference/handle.ts,
// finishStream). Here the settle is slowed for real: the gateway's Redis, where the settle's
// charge and usage record go (one script: hot balance and outbox), sits behind a TCP proxy that
// the test silences while the stream runs and brings back 1.5 s later. The stream's content
// arrives meanwhile; the final event must wait for the link, and when it arrives the charge is
// already in Redis. On every surface, pass-through and translated (Gemini's final chunk is the one
// with finishReason).

import t, { type Test } from 'tap';
import { RedisHotStore } from '../../src/store/hot-redis.js';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { geminiUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';
import { sleep } from '../helpers/http.js';
import { REDIS_URL, testRedisPrefix } from '../helpers/stores.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const PAUSE_MS = 1500;

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const redisUrl = new URL(REDIS_URL);
const proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
t.teardown(() => proxy.close());
const prefix = testRedisPrefix(t);
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: geminiUpstream(fake.url) }),
  // The pause stays well inside the command timeout: the settle is slow, not failed.
  env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_PREFIX: prefix, REDIS_TIMEOUT_MS: '10000' },
});
// The test reads Redis directly, not through the proxy.
const direct = new RedisHotStore(REDIS_URL, prefix);
t.teardown(() => direct.close());
const user = await gw.user('10');

interface Arrival {
  at: number;
  event: string;
}

/** Sends a streaming request and notes when each SSE event arrives; `onFirst` runs at the first. */
async function stream(
  path: string,
  body: object,
  onFirst: () => void,
  onFinal: (ev: string) => Promise<void>,
): Promise<Arrival[]> {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${user.key}` };
  if (path === '/v1/messages') headers['anthropic-version'] = '2023-06-01';
  const gemini = path.startsWith('/v1beta/');
  // Gemini names the model in the URL and takes `contents`, its cap in generationConfig.
  const { model, max_tokens, messages } = body as {
    model: string;
    max_tokens: number;
    messages: { content: string }[];
  };
  const url = gemini ? `${gw.url}/v1beta/models/${model}:streamGenerateContent?alt=sse` : `${gw.url}${path}`;
  const sent = gemini
    ? {
        contents: messages.map((m) => ({ role: 'user', parts: [{ text: m.content }] })),
        generationConfig: { maxOutputTokens: max_tokens },
      }
    : body;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(sent) });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  const arrivals: Arrival[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true }).replaceAll('\r\n', '\n');
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const event = text.slice(0, end);
      text = text.slice(end + 2);
      arrivals.push({ at: performance.now(), event });
      if (arrivals.length === 1) onFirst();
      if (isFinal(event)) await onFinal(event);
    }
  }
  return arrivals;
}

const isFinal = (event: string) =>
  event === 'data: [DONE]' || event.startsWith('event: message_stop') || event.includes('"finishReason"');

const cases: { name: string; path: string; model: string }[] = [
  { name: 'chat, pass-through ([DONE])', path: '/v1/chat/completions', model: 'oa-model' },
  { name: 'chat, translated from Anthropic ([DONE])', path: '/v1/chat/completions', model: 'an-model' },
  { name: 'messages, pass-through (message_stop)', path: '/v1/messages', model: 'an-model' },
  { name: 'messages, translated from OpenAI (message_stop)', path: '/v1/messages', model: 'oa-model' },
  { name: 'gemini, pass-through (finishReason)', path: '/v1beta/models', model: 'gm-model' },
  { name: 'gemini, translated from Anthropic (finishReason)', path: '/v1beta/models', model: 'an-model' },
];

async function check(t: Test, { path, model }: (typeof cases)[number]) {
  // One plain request first: the account is loaded and the lease open, so the slowed stream's
  // only Redis call is its settle.
  const warm = await stream(
    path,
    { model, stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    () => {},
    async () => {},
  );
  t.ok(
    warm.some((a) => isFinal(a.event)),
    'a stream ends with its final event',
  );
  await gw.services.outbox.drained();
  const before = (await direct.balance(user.userId))!.balance;

  let silencedAt = 0;
  let restoredAt = 0;
  let balanceAtFinal: bigint | undefined;
  let restoring: Promise<void> | undefined;
  const arrivals = await stream(
    path,
    // Ten deltas 40 ms apart: the content streams for about 400 ms, within the pause.
    { model, stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'count [[paced:10:40]]' }] },
    () => {
      proxy.cut('blackhole');
      silencedAt = performance.now();
      restoring = sleep(PAUSE_MS).then(() => {
        restoredAt = performance.now();
        proxy.restore();
      });
    },
    async () => {
      balanceAtFinal = (await direct.balance(user.userId))!.balance;
    },
  );
  await restoring;
  const final = arrivals.findIndex((a) => isFinal(a.event));
  t.ok(final > 0, 'the stream has its final event');
  t.equal(final, arrivals.length - 1, 'last');
  const content = arrivals.slice(0, final);
  t.ok(content.length >= 10, `the content came (${content.length} events)`);
  t.ok(
    content.at(-1)!.at < restoredAt,
    `the content did not wait for Redis (last of it ${Math.round(content.at(-1)!.at - silencedAt)} ms into the pause)`,
  );
  t.ok(
    arrivals[final].at >= restoredAt,
    `the final event waited for the settle (${Math.round(arrivals[final].at - silencedAt)} ms after the link went silent, back at ${Math.round(restoredAt - silencedAt)} ms)`,
  );
  t.ok(arrivals[final].at - silencedAt >= PAUSE_MS, 'no earlier than the pause');
  t.ok(
    balanceAtFinal !== undefined && balanceAtFinal < before,
    `the charge was in Redis when the final event arrived (${before} → ${balanceAtFinal})`,
  );

  await gw.services.outbox.drained();
  const [row] = await gw.stores.sql<{ cost_nano: bigint; status: number; stream: boolean }[]>`
    SELECT cost_nano, status, stream FROM usage_records WHERE user_id = ${user.userId} ORDER BY id DESC LIMIT 1`;
  t.match(row, { status: 200, stream: true }, 'recorded');
  t.equal(before - balanceAtFinal!, row.cost_nano, 'what Redis held at the final event is the recorded charge');
}

for (const c of cases)
  await t.test(`${c.name}: the final event arrives only once the charge is recorded`, (t) => check(t, c));
