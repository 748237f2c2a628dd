// An OpenAI-compatible vendor that answers with a bare UUID id (as some do): the chat
// surface still answers with a chatcmpl- id.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startTestGateway, testCatalogue, PRICES } from '../helpers/gateway.js';

const vendor = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: '7a1f2c3e-5b6d-4e8f-9a0b-1c2d3e4f5a6b',
        object: 'chat.completion',
        created: 1,
        model: 'v',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      }),
    );
  });
});
await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
t.teardown(() => vendor.close());
const base = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;

const catalogue = testCatalogue({
  upstream: base,
  extra: {
    providers: [{ id: 'uuid-vendor', dialect: 'openai', base_url: `${base}/v1` }],
    models: [{ id: 'uuid-model', ...PRICES, routes: [{ provider: 'uuid-vendor', model: 'v' }] }],
  },
});
const gw = await startTestGateway(t, { upstream: base, catalogue });
const user = await gw.user('1');
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: user.key, maxRetries: 0 });

t.test('a non-chatcmpl upstream id becomes a chatcmpl- id', async (t) => {
  const r = await client.chat.completions.create({ model: 'uuid-model', messages: [{ role: 'user', content: 'x' }] });
  t.match(r.id, /^chatcmpl-[0-9A-Za-z]{20,}$/);
  t.equal(r.choices[0].message.content, 'ok');
  t.equal((r.usage as any).cached_tokens, 0);
});
