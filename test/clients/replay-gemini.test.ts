// Gemini CLI's requests (test/fixtures/clients/gemini-cli.*, captured; provenance in its README)
// replayed through the gateway's Gemini surface to an Anthropic-dialect model, an OpenAI-chat one
// and a Gemini provider. The prompt asks the fake upstream to call list_directory, and the
// follow-up hands its result back. Each replay checks what the upstream received (on the Gemini
// provider the body as sent, its cap added; elsewhere the mapped system prompt, tools and tool
// result) and what the CLI reads back: a functionCall, then the answer.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { startFakeUpstream, TEXT_ANSWER } from '../fake-upstream/server.js';
import { fixturePath } from '../fixtures/index.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';

interface ClientFixture {
  client: string;
  surface: 'gemini';
  toolCallId: string | null;
  request: { method: 'POST'; path: string; headers: Record<string, string>; body: Record<string, any> };
}
const load = (file: string): ClientFixture => JSON.parse(readFileSync(fixturePath('clients', file), 'utf8'));
const first = load('gemini-cli.first.json');
const followUp = load('gemini-cli.follow-up.json');

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const MAX_OUTPUT = 64000;
const model = (id: string, provider: string) => ({
  id,
  owned_by: 'fake',
  context_window: 1000000,
  max_output_tokens: MAX_OUTPUT,
  ...PRICES,
  routes: [{ provider, model: 'tool_round', reasoning: true }],
});
const catalogue = testCatalogue({
  upstream: fake.url,
  extra: {
    providers: [
      { id: 'fake-gemini', dialect: 'gemini', base_url: `${fake.url}/v1beta`, api_key: { env: 'FAKE_GEMINI_KEY' } },
    ],
    models: [model('rg-an', 'fake-anthropic'), model('rg-oa', 'fake-openai'), model('rg-gm', 'fake-gemini')],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue });
const user = await gw.user('100');

/** The fixture's request with this test's key and model (the model is in Gemini's path). */
async function send(fx: ClientFixture, modelId: string, body = fx.request.body) {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(fx.request.headers)) headers[k] = v.replace('ar-REPLACED-BY-THE-TEST', user.key);
  const path = fx.request.path.replace(/\/models\/[^:]+:/, `/models/${modelId}:`);
  const before = fake.requests.length;
  const res = await request(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.body.text();
  const chunks = text
    .split('\r\n\r\n')
    .filter((e) => e.trim() !== '')
    .map((e) => JSON.parse(e.replace(/^data: /, '')));
  return {
    status: res.statusCode,
    type: String(res.headers['content-type'] ?? ''),
    chunks,
    upstream: fake.requests.length > before ? fake.requests.at(-1) : undefined,
  };
}

const parts = (chunks: any[]) => chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);

for (const target of [
  { model: 'rg-an', dialect: 'anthropic' },
  { model: 'rg-oa', dialect: 'openai' },
  { model: 'rg-gm', dialect: 'gemini' },
]) {
  t.test(`Gemini CLI → ${target.dialect} upstream: one tool round`, async (t) => {
    const one = await send(first, target.model);
    t.equal(one.status, 200);
    t.match(one.type, /^text\/event-stream/, 'alt=sse: an event stream');
    const call = parts(one.chunks).find((p) => p.functionCall);
    t.match(call, { functionCall: { name: 'list_directory', args: { dir_path: '.' } } }, 'the CLI gets a functionCall');
    t.equal(one.chunks.at(-1).candidates[0].finishReason, 'STOP', 'then finishReason');
    t.equal(one.chunks.at(-1).modelVersion, target.model);
    const sent = one.upstream!;
    const tools = first.request.body.tools[0].functionDeclarations.map((d: any) => d.name);
    if (target.dialect === 'gemini') {
      const { generationConfig, ...rest } = sent.body;
      const { generationConfig: clientConfig, ...clientRest } = first.request.body;
      t.same(rest, clientRest, 'the body as the CLI sent it');
      t.same(
        generationConfig,
        { ...clientConfig, maxOutputTokens: MAX_OUTPUT },
        'its config, the cap added (the CLI sends none)',
      );
      t.equal(sent.path, '/v1beta/models/tool_round:streamGenerateContent');
    } else if (target.dialect === 'anthropic') {
      t.same(
        sent.body.tools.map((x: any) => x.name),
        tools,
        'every declared tool',
      );
      t.match(JSON.stringify(sent.body.system), /You are Gemini CLI/, 'systemInstruction → system');
      t.match(sent.body.thinking, { type: 'enabled' }, 'thinkingLevel HIGH → a thinking budget');
    } else {
      t.same(
        sent.body.tools.map((x: any) => x.function.name),
        tools,
      );
      t.equal(sent.body.messages[0].role, 'system');
      t.equal(sent.body.reasoning_effort, 'high', 'thinkingLevel HIGH → reasoning_effort');
    }

    // The follow-up as the CLI would send it after running the tool: the call as it got it, its result.
    const body = JSON.parse(
      JSON.stringify(followUp.request.body).replaceAll(
        followUp.toolCallId!,
        call.functionCall.id ?? followUp.toolCallId!,
      ),
    );
    const two = await send(followUp, target.model, body);
    t.equal(two.status, 200);
    t.equal(
      parts(two.chunks)
        .map((p) => p.text ?? '')
        .join(''),
      TEXT_ANSWER,
      'the answer after the tool ran',
    );
    const back = JSON.stringify(two.upstream!.body);
    t.match(back, /Directory listing for/, 'the tool result reached the upstream');
    if (target.dialect === 'anthropic') {
      const msgs = two.upstream!.body.messages;
      const use = msgs.at(-2).content.find((b: any) => b.type === 'tool_use');
      const result = msgs.at(-1).content.find((b: any) => b.type === 'tool_result');
      t.equal(result.tool_use_id, use.id, 'the result answers the call');
    }
  });
}
