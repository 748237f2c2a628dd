// The Gemini surface over HTTP against a started gateway: its three ways of sending the key (none
// of which reaches an upstream), its errors in google.rpc's envelope (as the SDK reads them), the
// stream without alt=sse as one JSON array, what a Gemini upstream is forwarded, what is refused
// (hosted tools not sold, cachedContent away from Gemini), and an upstream failing mid-stream.

import t from 'tap';
import { ApiError, GoogleGenAI } from '@google/genai';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { geminiUpstream, startTestGateway, testCatalogue } from '../helpers/gateway.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: testCatalogue({ upstream: fake.url, extra: geminiUpstream(fake.url) }),
});
const u = await gw.user('5');

const hello = { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] };

async function post(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': u.key }) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    headers: Object.fromEntries(res.headers),
    text,
    json,
  };
}

t.test('the key: x-goog-api-key, ?key= or a bearer token; never forwarded', async (t) => {
  fake.reset();
  t.equal((await post('/v1beta/models/gm-model:generateContent', hello)).status, 200, 'x-goog-api-key');
  t.equal(
    (await post(`/v1beta/models/gm-model:streamGenerateContent?alt=sse&key=${u.key}`, hello, {})).status,
    200,
    '?key=',
  );
  t.equal(
    (await post('/v1/models/models/gm-model:generateContent', hello, { authorization: `Bearer ${u.key}` })).status,
    200,
    'a bearer token, on /v1/ with a models/ name',
  );
  t.equal(fake.requests.length, 3);
  t.same(
    fake.requests.map((r) => r.query),
    ['', 'alt=sse', ''],
    "the client's query (its key) stays with the gateway",
  );
  t.ok(
    fake.requests.every(
      (r) => r.headers['x-goog-api-key'] === process.env.FAKE_GEMINI_KEY && !JSON.stringify(r).includes(u.key),
    ),
    "the upstream sees the provider's key only",
  );
});

t.test("errors in google.rpc's envelope", async (t) => {
  const none = await post('/v1beta/models/gm-model:generateContent', hello, {});
  t.match(
    none,
    { status: 401, json: { error: { code: 401, status: 'UNAUTHENTICATED', message: /x-goog-api-key/ } } },
    'no key',
  );
  t.match(
    await post('/v1beta/models/gm-model:generateContent', hello, { 'x-goog-api-key': 'ar-unknown' }),
    { status: 401, json: { error: { status: 'UNAUTHENTICATED' } } },
    'an unknown key',
  );
  t.match(
    await post('/v1beta/models/nope:generateContent', hello),
    { status: 404, json: { error: { code: 404, status: 'NOT_FOUND', message: /"nope"/ } } },
    'an unknown model',
  );
  t.match(
    await post('/v1beta/models/gm-model:embedText', hello),
    { status: 404, json: { error: { status: 'NOT_FOUND', message: /embedText/ } } },
    'an unknown method',
  );
  t.match(
    await post('/v1beta/models/gm-model:generateContent', '{"contents":'),
    { status: 400, json: { error: { code: 400, status: 'INVALID_ARGUMENT' } } },
    'not JSON',
  );
  t.match(
    await post('/v1beta/models/gm-model:generateContent', { contents: 'hi' }),
    { status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: /contents/ } } },
    'contents not an array',
  );
  const broke = await gw.user('0');
  const poor = await post('/v1beta/models/gm-model:generateContent', hello, { 'x-goog-api-key': broke.key });
  t.match(
    poor,
    {
      status: 402,
      json: { error: { code: 402, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'insufficient_balance' }] } },
    },
    'no balance: 402',
  );
  t.match(
    await post('/v1beta/models/gm-model:generateContent', {
      contents: [{ parts: [{ text: 'x [[error:400:echo]]' }] }],
    }),
    { status: 400, json: { error: { status: 'INVALID_ARGUMENT', message: /x/ } } },
    "the upstream's own 400",
  );

  const sdk = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
  const status = (p: Promise<unknown>) =>
    p.then(
      () => 200,
      (e: unknown) => (e instanceof ApiError ? e.status : -1),
    );
  t.equal(
    await status(sdk('ar-unknown').models.generateContent({ model: 'gm-model', contents: 'hi' })),
    401,
    'the SDK raises ApiError 401',
  );
  t.equal(await status(sdk(u.key).models.generateContent({ model: 'nope', contents: 'hi' })), 404, '404');
  t.equal(await status(sdk(broke.key).models.generateContent({ model: 'an-model', contents: 'hi' })), 402, '402');
  t.equal(
    await status(
      sdk(u.key).models.generateContent({ model: 'oa-model', contents: 'hi', config: { candidateCount: 2 } }),
    ),
    400,
    '400 for more than one candidate',
  );
});

t.test('without alt=sse a stream is one JSON array, written as it comes', async (t) => {
  for (const model of ['gm-model', 'oa-model']) {
    const res = await post(`/v1beta/models/${model}:streamGenerateContent`, hello);
    t.equal(res.status, 200);
    t.match(res.type, /^application\/json/, `${model}: a JSON body`);
    t.ok(Array.isArray(res.json), `${model}: an array`);
    t.equal(
      res.json.map((c: any) => c.candidates[0].content.parts?.[0]?.text ?? '').join(''),
      TEXT_ANSWER,
      `${model}: of the answer's chunks`,
    );
    t.equal(res.json.at(-1).candidates[0].finishReason, 'STOP', `${model}: the last with finishReason`);
    t.equal(res.json.at(-1).modelVersion, model);
  }
  const sse = await post('/v1beta/models/gm-model:streamGenerateContent?alt=sse', hello);
  t.match(sse.type, /^text\/event-stream/);
  t.ok(sse.text.endsWith('}\r\n\r\n') && !sse.text.includes('[DONE]'), 'alt=sse: CRLF events, no [DONE]');
  t.ok(
    sse.text
      .split('\r\n\r\n')
      .filter((e) => e !== '')
      .every((e) => JSON.parse(e.slice(6)).modelVersion === 'gm-model'),
    "every chunk names the catalogue's model",
  );
});

t.test("pass-through forwards the client's body, the cap set", async (t) => {
  fake.reset();
  const body = {
    ...hello,
    safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
    generationConfig: { temperature: 0.3, topK: 5, maxOutputTokens: 5000 },
    cachedContent: 'cachedContents/abc',
    futureField: { x: 1 },
  };
  t.equal((await post('/v1beta/models/gm-model:generateContent', body)).status, 200);
  t.same(
    fake.requests[0]!.body,
    { ...body, generationConfig: { temperature: 0.3, topK: 5, maxOutputTokens: 1000 } },
    "untouched but for maxOutputTokens, held at the model's most",
  );
  t.equal(fake.requests[0]!.path, '/v1beta/models/upstream-gm:generateContent');
});

t.test('hosted tools not sold are taken out; refused: what only Gemini can serve', async (t) => {
  fake.reset();
  const fn = { functionDeclarations: [{ name: 'get_time', description: 'The time.' }] };
  const code = await post('/v1beta/models/gm-model:generateContent', {
    ...hello,
    tools: [{ codeExecution: {}, ...fn }, { googleSearch: {} }],
  });
  t.equal(code.status, 200, 'hosted tools not sold: taken out, the request served');
  t.equal(code.headers['x-airouter-dropped-tools'], 'codeExecution, googleSearch', 'named in the answer');
  t.same(fake.requests[0]!.body.tools, [fn], 'the functions sent without them; an entry left empty goes');
  const search = await post('/v1beta/models/oa-model:generateContent', { ...hello, tools: [{ googleSearch: {} }] });
  t.equal(search.status, 200, 'search where the catalogue prices it');
  t.equal(
    search.headers['x-airouter-dropped-tools'],
    'googleSearch',
    'but an OpenAI upstream cannot run it: named, not charged',
  );
  t.match(
    await post('/v1beta/models/an-model:generateContent', { ...hello, cachedContent: 'cachedContents/abc' }),
    { status: 400, json: { error: { message: /cachedContent/ } } },
    'a Gemini cache on an Anthropic model',
  );
  t.match(
    await post('/v1beta/models/gm-model:generateContent', {
      contents: [{ parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'https://x/v.mp4' } }] }],
    }),
    { status: 400, json: { error: { message: /fileData|video/ } } },
    'a file whose length the gateway cannot see',
  );
});

t.test('an upstream failing mid-stream ends the stream with an error chunk', async (t) => {
  for (const model of ['gm-model', 'oa-model']) {
    const res = await post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
      contents: [{ parts: [{ text: 'go [[midstream_error]]' }] }],
    });
    const chunks = res.text
      .split('\r\n\r\n')
      .filter((e) => e !== '')
      .map((e) => JSON.parse(e.slice(6)));
    t.ok(chunks.length > 1 && chunks[0].candidates, `${model}: the answer began`);
    t.match(chunks.at(-1), { error: { status: /UNAVAILABLE|INTERNAL/ } }, `${model}: and ended in the error envelope`);
  }
  await gw.services.outbox.drained();
  const rows = await gw.stores.sql<
    { status: number }[]
  >`SELECT status FROM usage_records WHERE user_id = ${u.userId} ORDER BY id DESC LIMIT 2`;
  t.same(
    rows.map((r) => r.status),
    [502, 502],
    'recorded as failed',
  );
});

t.test("the catalogue in Gemini's shape", async (t) => {
  const get = async (path: string) => {
    const res = await fetch(`${gw.url}${path}`, { headers: { 'x-goog-api-key': u.key } });
    return { status: res.status, json: (await res.json()) as any };
  };
  const page = await get('/v1beta/models?pageSize=2');
  t.equal(page.json.models.length, 2);
  t.ok(page.json.nextPageToken, 'a next page');
  const rest = await get(`/v1beta/models?pageSize=50&pageToken=${page.json.nextPageToken}`);
  t.equal(rest.json.nextPageToken, undefined, 'the last page has none');
  t.match(
    rest.json.models.find((m: any) => m.name === 'models/gm-model'),
    {
      displayName: 'gm-model',
      inputTokenLimit: 100000,
      outputTokenLimit: 1000,
      supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    },
  );
  t.match(
    await get('/v1/models'),
    { json: { models: Array } },
    "/v1/models answers Gemini's list to a Gemini key header",
  );
  t.match(await get('/v1beta/models/models/oa-model'), { json: { name: 'models/oa-model' } });
  t.match(await get('/v1beta/models/nope'), { status: 404, json: { error: { status: 'NOT_FOUND' } } });
  const counted = await post('/v1beta/models/gm-model:countTokens', {
    contents: [{ parts: [{ text: 'one two three' }] }],
  });
  t.match(counted, { status: 200, json: { totalTokens: Number } });
});

t.test('a malformed %-escape in the model is answered, not fatal', async (t) => {
  for (const p of ['/v1beta/models/%E0%A4%A:generateContent', '/v1beta/models/%zz:streamGenerateContent'])
    t.match(await post(p, hello), { status: 404, json: { error: { status: 'NOT_FOUND' } } }, p);
  const res = await fetch(`${gw.url}/v1beta/models/%zz`, { headers: { 'x-goog-api-key': u.key } });
  t.equal(res.status, 404);
  await res.arrayBuffer();
  t.equal((await post('/v1beta/models/gm-model:generateContent', hello)).status, 200, 'and the gateway keeps serving');
});

t.test(
  "a Gemini upstream refusing the gateway's key (its 400 API_KEY_INVALID) is not the client's fault",
  async (t) => {
    const res = await post('/v1beta/models/gm-model:generateContent', {
      contents: [{ parts: [{ text: '[[replay:gemini/errors/400_api_key_invalid.json]]' }] }],
    });
    t.match(res, { status: 503, json: { error: { status: 'UNAVAILABLE', message: /"gm-model" is unavailable/ } } });
    t.notMatch(res.text, /API key not valid/, "the vendor's words about its key stay with the gateway");
  },
);

t.test('an upstream connection cut mid-stream: the stream ends in the error envelope, the array closed', async (t) => {
  for (const model of ['gm-model', 'oa-model']) {
    const arr = await post(`/v1beta/models/${model}:streamGenerateContent`, {
      contents: [{ parts: [{ text: 'go [[drop:3]]' }] }],
    });
    t.ok(Array.isArray(arr.json), `${model}: still one JSON array`);
    t.match(arr.json?.at(-1), { error: { code: 502, status: 'INTERNAL' } }, `${model}: ending in the error`);
    t.ok(arr.json?.length > 1, `${model}: after what had come`);
  }
});
