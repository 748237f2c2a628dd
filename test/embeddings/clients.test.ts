// POST /v1/embeddings as its clients call it: OpenAI's SDK (which asks for base64 unless told
// otherwise, and decodes it) and LangChain's OpenAIEmbeddings, against a real gateway whose
// upstreams are the fake's OpenAI and Gemini endpoints. Every vector is checked against the one
// the fake made, and the answer's shape against the recorded vendor answers.

import t from 'tap';
import OpenAI from 'openai';
import { spawn } from 'node:child_process';
import { fakeEmbedding, FAKE_DIMENSIONS } from '../fake-upstream/server.js';
import { childEnv, REPO_ROOT } from '../helpers/child.js';
import { readFixtureJson } from './fixtures.js';
import { embed, startEmbeddings } from './setup.js';

const { fake, gw } = await startEmbeddings(t);
const user = await gw.user('5');
const client = new OpenAI({ apiKey: user.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });

const lastUpstream = () => fake.requests.at(-1)!;

/** langchain-client.ts under tsx (see there why not in this process). */
function runLangChain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/embeddings/langchain-client.ts'], {
      cwd: REPO_ROOT,
      env: childEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

t.test("openai SDK: one string, with the SDK's default base64 decoded back to the fake's floats", async (t) => {
  const res = await client.embeddings.create({ model: 'emb-model', input: 'The quick brown fox' });
  t.equal(res.object, 'list');
  t.equal(res.model, 'emb-model', "the catalogue id the client asked for, not the upstream's");
  t.equal(res.data.length, 1);
  t.equal(res.data[0]!.object, 'embedding');
  t.equal(res.data[0]!.index, 0);
  t.same(
    Array.from(res.data[0]!.embedding),
    fakeEmbedding('The quick brown fox'),
    'the vector the upstream made, exactly',
  );
  t.equal(
    lastUpstream().body.encoding_format,
    'base64',
    "the SDK's base64 reached the OpenAI-dialect upstream as asked",
  );
  t.equal(lastUpstream().body.model, 'upstream-emb', 'the upstream is sent its own model name');
  t.equal(res.usage.prompt_tokens, 4);
  t.equal(res.usage.total_tokens, 4);
});

t.test('openai SDK: an array of strings, float on request, with dimensions and user passed through', async (t) => {
  const input = ['alpha', 'beta gamma', 'δέλτα'];
  const res = await client.embeddings.create({
    model: 'emb-model',
    input,
    dimensions: 8,
    encoding_format: 'float',
    user: 'end-user-7',
  });
  t.same(
    res.data.map((d) => d.index),
    [0, 1, 2],
  );
  res.data.forEach((d, i) => t.same(d.embedding, fakeEmbedding(input[i]!, 8), `vector ${i}`));
  const sent = lastUpstream().body;
  t.same(
    sent,
    { model: 'upstream-emb', input, dimensions: 8, encoding_format: 'float', user: 'end-user-7' },
    "the client's body, bar the model",
  );
});

t.test('openai SDK: token arrays, one and several', async (t) => {
  const one = await client.embeddings.create({ model: 'emb-model', input: [9906, 1917, 0], encoding_format: 'float' });
  t.same(one.data[0]!.embedding, fakeEmbedding([9906, 1917, 0]));
  t.equal(one.usage.prompt_tokens, 3, 'a token array costs its length');
  const many = await client.embeddings.create({
    model: 'emb-model',
    input: [
      [1, 2],
      [3, 4, 5],
    ],
    encoding_format: 'float',
  });
  t.same(
    many.data.map((d) => d.embedding),
    [fakeEmbedding([1, 2]), fakeEmbedding([3, 4, 5])],
  );
  t.equal(many.usage.prompt_tokens, 5);
});

t.test('base64 asked of an upstream that answers floats (Gemini): encoded by the gateway', async (t) => {
  const res = await client.embeddings.create({ model: 'emb-gemini', input: ['one', 'two'], dimensions: 12 });
  t.same(
    res.data.map((d) => Array.from(d.embedding)),
    [fakeEmbedding('one', 12), fakeEmbedding('two', 12)],
  );
  const sent = lastUpstream();
  t.equal(sent.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
  t.equal(sent.headers['x-goog-api-key'], process.env.FAKE_GEMINI_KEY, "Gemini's key header");
  t.notOk(sent.headers.authorization, 'and no bearer');
  t.same(sent.body, {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'one' }] }, outputDimensionality: 12 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'two' }] }, outputDimensionality: 12 },
    ],
  });
});

t.test(
  'recorded OpenAI answers: a float answer asked as base64 gives the recorded base64, byte for byte',
  async (t) => {
    const float = readFixtureJson('openai/embeddings/float.json');
    const base64 = readFixtureJson('openai/embeddings/base64.json');
    const asB64 = await embed(gw, user.key, { model: 'emb-replay', input: 'x', encoding_format: 'base64' });
    t.equal(asB64.status, 200);
    t.equal(asB64.json.data[0].embedding, base64.data[0].embedding);
    t.same(asB64.json.usage, { prompt_tokens: 1, total_tokens: 1 }, 'the recorded usage');
    t.equal(asB64.json.model, 'emb-replay');
    // And the other way: a base64 answer asked as floats decodes to the recorded floats (as float32).
    const asFloat = await embed(gw, user.key, { model: 'emb-replay-b64', input: 'x', encoding_format: 'float' });
    t.equal(asFloat.status, 200);
    t.same(asFloat.json.data[0].embedding, float.data[0].embedding.map(Math.fround));
    const asIs = await embed(gw, user.key, { model: 'emb-replay', input: 'x' });
    t.same(asIs.json.data[0].embedding, float.data[0].embedding, 'float to float: the numbers as recorded');
  },
);

t.test('recorded Gemini answer: three vectors in order, no usage from the vendor', async (t) => {
  const recorded = readFixtureJson('gemini/batch_embed_contents_256d.json');
  const res = await embed(gw, user.key, {
    model: 'emb-gemini-replay',
    input: ['a', 'bb', 'ccc'],
    encoding_format: 'float',
  });
  t.equal(res.status, 200);
  t.same(
    res.json.data.map((d: any) => d.embedding),
    recorded.embeddings.map((e: any) => e.values),
  );
  t.same(res.json.usage, { prompt_tokens: 3, total_tokens: 3 }, "the gateway's own count of the three texts");
});

t.test('LangChain OpenAIEmbeddings: embedQuery and embedDocuments', async (t) => {
  const run = await runLangChain({ GATEWAY_URL: gw.url, KEY: user.key });
  t.equal(run.code, 0, run.stderr);
  const got = JSON.parse(run.stdout);
  t.same(got.query, fakeEmbedding('what is a fox?'));
  // LangChain replaces newlines with spaces before sending.
  t.same(got.documents, [fakeEmbedding('first document'), fakeEmbedding('second document')]);
  t.equal(got.query.length, FAKE_DIMENSIONS);
  t.same(got.geminiQuery, fakeEmbedding('gemini via langchain', 5), 'a Gemini-served model, dimensions passed on');
});

t.test('x-api-key works too', async (t) => {
  const res = await embed(
    gw,
    undefined,
    { model: 'emb-model', input: 'k' },
    { 'x-api-key': user.key, 'x-request-id': 'embed-rid-1' },
  );
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-request-id'), 'embed-rid-1', 'the request id comes back, as on every surface');
  t.match(res.headers.get('content-type'), /^application\/json/);
});
