// What an open stream keeps of its request. Coding agents send prompts of hundreds of KB and keep
// streams open for minutes: the gateway keeps the prompt's text once (the fallback token count
// needs it), not the bytes it read nor the bytes it sent upstream. Those are ArrayBuffers, so
// `process.memoryUsage().arrayBuffers` after a full collection shows whether any is still held.

import t from 'tap';
import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('100');

const PROMPT_BYTES = 200 * 1024;
const STREAMS = 6;

interface OpenStream {
  firstData: Promise<void>;
  done: Promise<string>;
}

/** A streamed request over node:http, which does not keep the body once written. */
function openStream(
  model: string,
  prompt: string,
  to: { url: string; key: string; surface?: 'chat' | 'messages' } = { url: gw.url, key: user.key },
): OpenStream {
  let first!: () => void;
  const firstData = new Promise<void>((r) => (first = r));
  const done = new Promise<string>((resolve, reject) => {
    const messages = to.surface === 'messages';
    const body = JSON.stringify({
      model,
      stream: true,
      ...(messages ? { max_tokens: 100 } : {}),
      messages: [{ role: 'user', content: prompt }],
    });
    const req = http.request(`${to.url}${messages ? '/v1/messages' : '/v1/chat/completions'}`, {
      method: 'POST',
      agent: false,
      headers: {
        ...(messages
          ? { 'x-api-key': to.key, 'anthropic-version': '2023-06-01' }
          : { authorization: `Bearer ${to.key}` }),
        'content-type': 'application/json',
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        text += s;
        if (text.includes('"content":"') || text.includes('"text":"tok')) first();
      });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  return { firstData, done };
}

function settledArrayBuffers(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

t.test('an open stream holds neither the body it read nor the body it sent', async (t) => {
  const before = settledArrayBuffers();
  const prompts = Array.from(
    { length: STREAMS },
    (_, i) => `${i} `.padEnd(PROMPT_BYTES, 'lorem ipsum ') + ' [[paced:30:100]]',
  );
  const streams = prompts.map((p) => openStream('oa-model', p));
  await Promise.all(streams.map((s) => s.firstData));
  const held = settledArrayBuffers() - before;
  // Before, each stream kept its body twice (the request bytes through a listener's scope, the
  // upstream bytes on undici's request): 2.4 MB here.
  t.ok(held < (STREAMS * PROMPT_BYTES) / 2, `ArrayBuffers held by ${STREAMS} open streams: ${held} bytes`);

  const answers = await Promise.all(streams.map((s) => s.done));
  for (const a of answers) t.match(a, /data: \[DONE\]/, 'each stream ends normally');
  const sent = fake.requests.filter(
    (r) => typeof r.body?.messages?.[0]?.content === 'string' && r.body.messages[0].content.length > PROMPT_BYTES,
  );
  t.equal(sent.length, STREAMS, 'every request reached the upstream');
  for (const r of sent) {
    t.equal(
      r.headers['content-length'],
      String(Buffer.byteLength(JSON.stringify(r.body))),
      'sent with its length, not chunked',
    );
    t.equal(r.headers['transfer-encoding'], undefined);
  }
  t.same(new Set(sent.map((r) => r.body.messages[0].content)), new Set(prompts), 'each prompt arrived whole');
});

t.test('a large body still reaches the second route when the first is down', async (t) => {
  const prompt = 'fallback '.padEnd(PROMPT_BYTES, 'dolor sit ') + ' [[paced:3:10]]';
  const answer = await openStream('fallback-model', prompt).done;
  t.match(answer, /data: \[DONE\]/);
  const last = fake.requests.at(-1)!;
  t.equal(last.body.messages[0].content, prompt, 'the whole prompt, from the second route');
  await eventually(async () => {
    await gw.services.outbox.drained();
    const [row] = await gw.services.sql<
      { status: number }[]
    >`SELECT status FROM usage_records WHERE user_id = ${user.userId} ORDER BY id DESC LIMIT 1`;
    return row?.status === 200 ? row : undefined;
  });
});

t.test('a stream whose upstream reports its input at once holds no prompt at all', async (t) => {
  // The prompt is kept only for the fallback token count, which a reported input count makes
  // moot: Anthropic's message_start reports it first, OpenAI's usage chunk comes last. A fake
  // that records nothing, so that it keeps no copy once a stream is over.
  // Heap figures move by a megabyte or so between runs: the prompts add up to several.
  const MANY = 16;
  const LARGE = 250 * 1024;
  const quiet = await startFakeUpstream({ record: false });
  t.teardown(() => quiet.close());
  const own = await startTestGateway(t, { upstream: quiet.url });
  const buyer = await own.user('100');
  const held = async (model: string, surface: 'chat' | 'messages') => {
    const prompts = Array.from(
      { length: MANY },
      (_, i) => `${model} ${i} `.padEnd(LARGE, 'amet consectetur ') + ' [[paced:30:100]]',
    );
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const streams = prompts.map((p) => openStream(model, p, { url: own.url, key: buyer.key, surface }));
    await Promise.all(streams.map((s) => s.firstData));
    gc();
    gc();
    const bytes = process.memoryUsage().heapUsed - before;
    for (const a of await Promise.all(streams.map((s) => s.done)))
      t.ok(a.includes('[DONE]') || a.includes('message_stop'), 'each stream ends normally');
    return bytes;
  };
  const total = MANY * LARGE;
  // The fake upstream runs in this process and keeps each request's body while it streams, so
  // both figures count a copy of every prompt on its side: the difference is the gateway's.
  const openai = await held('oa-model', 'chat');
  const anthropic = await held('an-model', 'messages');
  t.ok(
    openai > total,
    `OpenAI upstream: ${openai} bytes of heap held by ${MANY} open streams (the fake's copy and the gateway's)`,
  );
  t.ok(
    openai - anthropic > total * 0.8,
    `Anthropic upstream: ${anthropic} bytes, at least one copy of every prompt less`,
  );
});
