// The embeddings adapters and codecs on their own: where each vendor is called, what it is sent,
// how its answer is read (in any order, malformed), and float32 base64 both ways.

import t from 'tap';
import { EMBEDDINGS } from '../../src/dialects/embeddings.js';
import {
  base64ToFloats,
  embeddingTokenBound,
  floatsToBase64,
  parseEmbeddingsRequest,
  PER_INPUT_TOKENS,
} from '../../src/inference/embeddings.js';
import { readFixtureJson } from './fixtures.js';

const { openai, gemini } = EMBEDDINGS;

t.test('Gemini: the version segment added unless the base_url has one, models/ not doubled', async (t) => {
  t.equal(
    gemini.endpoint('https://generativelanguage.googleapis.com', 'gemini-embedding-001'),
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
  );
  t.equal(
    gemini.endpoint('https://generativelanguage.googleapis.com/v1beta', 'models/gemini-embedding-001'),
    'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents',
  );
  t.equal(gemini.endpoint('https://example.test/v1', 'm'), 'https://example.test/v1/models/m:batchEmbedContents');
  t.same(gemini.headers('k'), { 'x-goog-api-key': 'k' });
  const { request } = parseEmbeddingsRequest({ model: 'x', input: ['a', 'b'], user: 'u' });
  t.same(
    gemini.body(request, 'models/gemini-embedding-001'),
    {
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    },
    'no outputDimensionality unless asked; no user',
  );
  const recorded = readFixtureJson('gemini/batch_embed_contents_256d.json');
  const parsed = gemini.parse(recorded)!;
  t.equal(parsed.vectors.length, 3);
  t.equal(parsed.promptTokens, null, 'the recorded answer has no usage');
  t.equal(gemini.parse({ embeddings: [{ values: ['x'] }] }), undefined, 'not numbers');
  t.equal(
    gemini.parse(readFixtureJson('gemini/errors/404_not_found_embed.json')),
    undefined,
    'an error body is no answer',
  );
});

t.test('OpenAI: the body passes through bar model; answers in any order; usage read or absent', async (t) => {
  t.equal(openai.endpoint('https://api.openai.com/v1', 'm'), 'https://api.openai.com/v1/embeddings');
  const { request } = parseEmbeddingsRequest({ model: 'ours', input: 'a', dimensions: 3, future_field: 1 });
  t.same(openai.body(request, 'theirs'), { model: 'theirs', input: 'a', dimensions: 3, future_field: 1 });
  const swapped = openai.parse({
    data: [
      { index: 1, embedding: [2] },
      { index: 0, embedding: [1] },
    ],
    usage: { prompt_tokens: 7 },
  })!;
  t.same(swapped.vectors, [[1], [2]], 'placed by index');
  t.equal(swapped.promptTokens, 7);
  t.equal(openai.parse({ data: [{ embedding: [1] }] })!.promptTokens, null, 'no usage: null, so the gateway counts');
  t.equal(
    openai.parse({
      data: [
        { index: 0, embedding: [1] },
        { index: 0, embedding: [2] },
      ],
    }),
    undefined,
    'an index twice',
  );
  t.equal(openai.parse({ data: [{ index: 5, embedding: [1] }] }), undefined, 'an index out of range');
  t.equal(openai.parse({ error: { message: 'x' } }), undefined);
  const recorded = openai.parse(readFixtureJson('openai/embeddings/base64.json'))!;
  t.type(recorded.vectors[0], 'string', 'base64 kept as it came');
  t.equal(recorded.promptTokens, 1);
});

t.test('float32 base64 both ways, as OpenAI encodes it', async (t) => {
  const floats = readFixtureJson('openai/embeddings/float.json').data[0].embedding as number[];
  const base64 = readFixtureJson('openai/embeddings/base64.json').data[0].embedding as string;
  t.equal(floatsToBase64(floats), base64, 'the recorded float answer encodes to the recorded base64 answer');
  t.same(base64ToFloats(base64), floats.map(Math.fround), 'and back, to each float32');
  t.equal(base64ToFloats(Buffer.from([1, 2, 3]).toString('base64')), undefined, 'not whole float32s');
});

t.test('the hold bound: bytes of text, length of token arrays, markers per input', async (t) => {
  t.equal(embeddingTokenBound(['héllo']), 6 + PER_INPUT_TOKENS, 'é is two bytes');
  t.equal(embeddingTokenBound([[1, 2, 3], 'ab']), 3 + 2 + 2 * PER_INPUT_TOKENS);
  t.equal(embeddingTokenBound(['🦊']), 4 + PER_INPUT_TOKENS, 'an emoji is four bytes, at most four tokens');
});
