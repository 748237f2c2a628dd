import t from 'tap';
import { spliceCachedTokens } from '../../src/dialects/openai/upstream.js';

const body = (usage: unknown, extra = '') =>
  `{"id":"chatcmpl-1","choices":[{"message":{"content":"say \\"usage\\":{ here"}}]${extra},"usage":${JSON.stringify(usage)}}`;
const splice = (usage: Record<string, unknown>, cached: number, extra = '') => {
  const text = body(usage, extra);
  const out = spliceCachedTokens(text, JSON.parse(text).usage, cached);
  return out === undefined ? undefined : JSON.parse(out);
};

t.test('adds cached_tokens at top level next to the details', async (t) => {
  const out = splice({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } }, 4);
  t.same(out.usage, { cached_tokens: 4, prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } });
  t.equal(out.choices[0].message.content, 'say "usage":{ here', 'text inside strings is untouched');
});

t.test('adds both fields when the vendor sends no details; empty usage stays valid JSON', async (t) => {
  t.same(splice({ prompt_tokens: 3 }, 0).usage, {
    cached_tokens: 0,
    prompt_tokens_details: { cached_tokens: 0 },
    prompt_tokens: 3,
  });
  t.same(splice({}, 0).usage, { cached_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } });
});

t.test('leaves complete usage alone and asks for a rewrite when details lack the count', async (t) => {
  const text = body({ cached_tokens: 1, prompt_tokens_details: { cached_tokens: 1 } });
  t.equal(spliceCachedTokens(text, JSON.parse(text).usage, 1), text);
  const odd = body({ prompt_tokens_details: { audio_tokens: 0 } });
  t.equal(spliceCachedTokens(odd, JSON.parse(odd).usage, 0), undefined);
  t.equal(spliceCachedTokens('{"usage" : 5}', {}, 0), undefined, 'no usage object to splice into');
});
