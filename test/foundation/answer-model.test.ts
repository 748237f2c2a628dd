// Every answer names the catalogue's model the client asked for, never the upstream's own name
// (the fake upstream answers with the route's model, `upstream-oa` and the like): on every
// surface, from every upstream dialect, whole and streamed, pass-through answers included, and
// the Responses answer kept for GET /v1/responses/{id}.

import t from 'tap';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { responsesUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: responsesUpstream(fake.url) }),
});
const u = await gw.user('5');

const MODELS = { 'oa-model': 'upstream-oa', 'an-model': 'upstream-an', 'rs-model': 'upstream-rs' } as const;
type Model = keyof typeof MODELS;

const SURFACES = {
  chat: {
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${u.key}` },
    body: (model: Model, text: string) => ({ model, messages: [{ role: 'user', content: text }] }),
  },
  messages: {
    path: '/v1/messages',
    headers: { 'x-api-key': u.key },
    body: (model: Model, text: string) => ({ model, max_tokens: 50, messages: [{ role: 'user', content: text }] }),
  },
  responses: {
    path: '/v1/responses',
    headers: { authorization: `Bearer ${u.key}` },
    body: (model: Model, text: string) => ({ model, input: text, max_output_tokens: 50 }),
  },
};

/** Every value of a `model` key, at any depth. */
function models(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) models(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'model') out.push(v);
      else models(v, out);
    }
  }
  return out;
}

async function post(surface: keyof typeof SURFACES, model: Model, stream: boolean, text = 'hello'): Promise<string> {
  const s = SURFACES[surface];
  const res = await fetch(`${gw.url}${s.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...s.headers },
    body: JSON.stringify({ ...s.body(model, text), stream }),
  });
  t.equal(res.status, 200, `${surface} ${model}${stream ? ' streamed' : ''}: answered`);
  return res.text();
}

for (const surface of Object.keys(SURFACES) as (keyof typeof SURFACES)[]) {
  for (const model of Object.keys(MODELS) as Model[]) {
    t.test(`${surface} → ${model}: whole and streamed, the answer names ${model}`, async (t) => {
      fake.reset();
      const whole = JSON.parse(await post(surface, model, false));
      t.equal(fake.requests.at(-1)!.body.model, MODELS[model], 'the upstream was asked for its own name');
      t.equal(whole.model, model, 'the whole answer');
      t.same(
        models(whole).filter((m) => m !== model),
        [],
        'no other name anywhere in it',
      );

      const wire = await post(surface, model, true);
      t.notMatch(wire, MODELS[model], "the upstream's name is nowhere in the stream");
      const named = wire
        .split('\n')
        .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
        .flatMap((l) => models(JSON.parse(l.slice(6))));
      t.ok(named.length > 0, 'the stream names a model');
      t.same(
        named.filter((m) => m !== model),
        [],
        "every event that names one names the catalogue's",
      );

      if (surface === 'responses') {
        for (const answer of [
          whole,
          JSON.parse(
            wire
              .split('\n')
              .filter((l) => l.includes('"response.completed"') && l.startsWith('data: '))[0]!
              .slice(6),
          ).response,
        ]) {
          const kept = await fetch(`${gw.url}/v1/responses/${answer.id}`, {
            headers: { authorization: `Bearer ${u.key}` },
          }).then((r) => r.json() as Promise<{ model?: string }>);
          t.equal(kept.model, model, 'the answer kept for GET /v1/responses/{id}');
        }
      }
    });
  }
}

// A translated stream completes on its last event, a moment before the upstream's body ends:
// the body is let end rather than cancelled, so the upstream connection is kept for the next.
t.test('translated streams leave their upstream connection open for the next request', async (t) => {
  for (const [surface, model] of [
    ['messages', 'oa-model'],
    ['chat', 'an-model'],
    ['responses', 'an-model'],
  ] as const) {
    fake.reset();
    // Paced, so that the last event arrives while the stream is being read, as it does live.
    await post(surface, model, true, '[[paced:3:20]]');
    await post(surface, model, true, '[[paced:3:20]]');
    const [first, second] = fake.requests;
    t.ok(
      first!.remotePort && first!.remotePort === second!.remotePort,
      `${surface} → ${model}: the second stream came over the first's connection`,
    );
    t.notOk(
      fake.streams.some((s) => s.aborted),
      'no upstream stream was cut short',
    );
  }
});
