import t from 'tap';
import { openai as dialect } from '../../src/dialects/openai/index.js';
import { capField } from '../../src/dialects/openai/upstream.js';

const ir = {
  model: 'x',
  system: [],
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
  stream: false,
  includeUsage: false,
  maxTokens: 9,
};

t.test(
  "one rule for the output-cap field: the operator's choice, then OpenAI's host, then the model name",
  async (t) => {
    const vendor = { host: 'api.deepseek.com' };
    const openai = { host: 'api.openai.com' };
    t.equal(capField(vendor, 'deepseek-chat'), 'max_tokens');
    t.equal(capField(vendor, 'o3-mini'), 'max_completion_tokens', 'reasoning models elsewhere (Azure) too');
    t.equal(capField(openai, 'gpt-4o'), 'max_completion_tokens', "OpenAI's own API takes it on every model");
    t.equal(
      capField({ ...openai, maxTokensField: 'max_tokens' }, 'o3-mini'),
      'max_tokens',
      "the catalogue's max_tokens_field wins",
    );
    t.equal(capField({ ...vendor, maxTokensField: 'both' }, 'deepseek-chat'), 'both');
    t.equal(capField(undefined, 'gpt-5-mini'), 'max_completion_tokens', 'no provider: the model name decides');
  },
);

t.test('translated and forwarded bodies carry the cap in the same field', async (t) => {
  for (const provider of [{ host: 'api.openai.com' }, { host: 'h', maxTokensField: 'both' as const }, { host: 'h' }]) {
    for (const model of ['gpt-4o', 'o3', 'mistral-large']) {
      const translated = dialect.buildRequest(ir, model);
      dialect.upstream.setOutputCap(translated, 9, provider, model);
      const forwarded: Record<string, unknown> = { model, max_tokens: 500, max_completion_tokens: 3 };
      dialect.upstream.setOutputCap(forwarded, 9, provider, model);
      const caps = (b: Record<string, unknown>) => [b.max_tokens, b.max_completion_tokens];
      t.same(caps(translated), caps(forwarded), `${provider.host} ${provider.maxTokensField ?? ''} ${model}`);
      t.ok(caps(forwarded).every((c) => c === 9 || c === undefined) && caps(forwarded).includes(9), 'exactly the cap');
    }
  }
});
