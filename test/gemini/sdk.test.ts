// The official @google/genai SDK, unchanged but for a base URL and a key, against the gateway's
// Gemini surface: generateContent, generateContentStream, a function-call round, countTokens and
// models.list, on an OpenAI-dialect model, an Anthropic-dialect one (both translated) and a
// Gemini provider (passed through).

import t from 'tap';
import { GoogleGenAI, type Content } from '@google/genai';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { geminiUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const catalogue = testCatalogue({ upstream: fake.url, extra: geminiUpstream(fake.url) });
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const u = await gw.user('5');
const ai = new GoogleGenAI({ apiKey: u.key, httpOptions: { baseUrl: gw.url } });
const MODELS = ['oa-model', 'an-model', 'gm-model'];

const WEATHER = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'The weather in a city',
      parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  ],
};

t.test('generateContent and generateContentStream answer on every upstream', async (t) => {
  for (const model of MODELS) {
    fake.reset();
    const whole = await ai.models.generateContent({ model, contents: 'hello' });
    t.equal(whole.text, TEXT_ANSWER, `${model}: generateContent`);
    t.equal(whole.modelVersion, model, `${model}: modelVersion names the catalogue's model`);
    t.equal(whole.candidates?.[0]?.finishReason, 'STOP', `${model}: STOP`);
    t.ok(
      (whole.usageMetadata?.promptTokenCount ?? 0) > 0 && (whole.usageMetadata?.candidatesTokenCount ?? 0) > 0,
      `${model}: usage`,
    );
    t.equal(fake.requests.length, 1, 'one upstream request');
    let text = '';
    let last;
    for await (const chunk of await ai.models.generateContentStream({ model, contents: 'stream please' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    t.equal(text, TEXT_ANSWER, `${model}: generateContentStream`);
    t.equal(last?.candidates?.[0]?.finishReason, 'STOP', `${model}: the last chunk has finishReason`);
    t.ok((last?.usageMetadata?.totalTokenCount ?? 0) > 0, `${model}: and the usage`);
  }
  const upstream = fake.requests.at(-1)!;
  t.match(
    upstream.path,
    /^\/v1beta\/models\/upstream-gm:streamGenerateContent$/,
    'Gemini upstream: the model and method in the URL',
  );
  t.equal(upstream.query, 'alt=sse', "streamed with alt=sse, nothing of the client's query");
  t.equal(upstream.headers['x-goog-api-key'], process.env.FAKE_GEMINI_KEY, 'the provider key in x-goog-api-key');
  t.equal(upstream.body.model, undefined, 'no model in the body');
});

t.test('a function-call round', async (t) => {
  for (const model of MODELS) {
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'weather in Paris? [[tool_round]]' }] }];
    const first = await ai.models.generateContent({ model, contents, config: { tools: [WEATHER] } });
    const calls = first.functionCalls ?? [];
    t.equal(calls.length, 1, `${model}: one call`);
    t.equal(calls[0]?.name, 'get_weather', `${model}: named`);
    t.same(calls[0]?.args, { city: 'Paris' }, `${model}: with its arguments`);
    contents.push(first.candidates![0]!.content!);
    contents.push({
      role: 'user',
      parts: [{ functionResponse: { id: calls[0]!.id, name: 'get_weather', response: { output: '21 degrees' } } }],
    });
    const second = await ai.models.generateContent({ model, contents, config: { tools: [WEATHER] } });
    t.equal(second.text, TEXT_ANSWER, `${model}: answered after the result`);
    const sent = fake.requests.at(-1)!.body;
    const text = JSON.stringify(sent);
    t.ok(text.includes('21 degrees'), `${model}: the result reached the upstream`);
  }
});

t.test('countTokens and models.list', async (t) => {
  const counted = await ai.models.countTokens({ model: 'an-model', contents: 'count these words please' });
  t.ok((counted.totalTokens ?? 0) > 0 && (counted.totalTokens ?? 0) < 20, `a count (${counted.totalTokens})`);
  const names: string[] = [];
  for await (const m of await ai.models.list()) names.push(m.name ?? '');
  t.ok(
    MODELS.every((id) => names.includes(`models/${id}`)),
    'every model listed as models/<id>',
  );
  const one = await ai.models.get({ model: 'gm-model' });
  t.equal(one.name, 'models/gm-model', 'one model');
  t.equal(one.outputTokenLimit, 1000, 'its output limit');
});

t.test('a streamed chat keeps its history, on every upstream', async (t) => {
  for (const model of MODELS) {
    const chat = ai.chats.create({ model });
    for (const message of ['first', 'second']) {
      let text = '';
      for await (const chunk of await chat.sendMessageStream({ message })) text += chunk.text ?? '';
      t.equal(text, TEXT_ANSWER, `${model}: ${message} answer`);
    }
    // The SDK keeps a model entry per chunk; a turn with one chunk it finds invalid is dropped whole.
    const history = chat.getHistory(true);
    const roles = history.map((c) => c.role).filter((r, i, all) => r !== all[i - 1]);
    t.same(roles, ['user', 'model', 'user', 'model'], `${model}: both turns kept (every chunk valid to the SDK)`);
    const firstTurn = history.slice(
      1,
      history.findIndex((c, i) => i > 0 && c.role === 'user'),
    );
    t.equal(
      firstTurn
        .flatMap((c) => c.parts ?? [])
        .map((p) => p.text ?? '')
        .join(''),
      TEXT_ANSWER,
      `${model}: the answer in it`,
    );
  }
});
