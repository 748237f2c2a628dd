// Which routes take a client's reasoning level when a request is translated (catalogue `reasoning`).
import t from 'tap';
import { compileCatalogue } from '../../src/catalogue/index.js';

const routes = (entries: object[]) =>
  compileCatalogue(
    {
      providers: [{ id: 'p', dialect: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [{ id: 'm', pricing: { input: 1, output: 1 }, routes: entries }],
    },
    'test',
  )
    .models.get('m')!
    .routes.map((r) => r.reasoning);

t.test('by model name when the catalogue does not say', async (t) => {
  const names = [
    'o3-mini',
    'openai/o4-mini',
    'gpt-5-mini',
    'claude-3-7-sonnet-latest',
    'claude-sonnet-4-5',
    'claude-opus-4-1',
    'claude-haiku-4-5',
    'gemini-2.5-flash',
    'models/gemini-3-pro-preview',
  ];
  t.same(
    routes(names.map((model) => ({ provider: 'p', model }))),
    names.map(() => true),
    names.join(', '),
  );
  const plain = ['gpt-4o-mini', 'claude-3-5-haiku-latest', 'deepseek-chat', 'foo3-bar', 'gemini-2.0-flash'];
  t.same(
    routes(plain.map((model) => ({ provider: 'p', model }))),
    plain.map(() => false),
    plain.join(', '),
  );
});

t.test('the catalogue decides when it says', async (t) => {
  t.same(
    routes([
      { provider: 'p', model: 'gpt-4o', reasoning: true },
      { provider: 'p', model: 'o3', reasoning: false },
    ]),
    [true, false],
  );
  t.throws(() => routes([{ provider: 'p', model: 'x', reasoning: 'yes' }]), /reasoning must be true or false/);
});
