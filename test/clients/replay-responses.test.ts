// The Responses API requests real clients send (test/fixtures/clients/ with `surface:
// "responses"`: Codex CLI and the OpenAI Agents SDK, captured; provenance in its README) replayed
// through the gateway's POST /v1/responses to an Anthropic-dialect model, an OpenAI-chat model
// and a provider that speaks Responses itself. The fake upstream calls the first declared tool,
// then answers in text once the function_call_output is back. Each replay checks what the
// upstream received (the body as sent on a Responses provider; on the others what was mapped:
// developer messages and instructions → the system prompt, namespaced and freeform tools →
// functions, hosted and reasoning items dropped) and what the client reads back.
import t from 'tap';
import type { Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { startFakeUpstream, TEXT_ANSWER, type RecordedRequest } from '../fake-upstream/server.js';
import { fixturePath } from '../fixtures/index.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';
import { assume } from '../helpers/messages.js';

interface ClientFixture {
  client: string;
  surface: 'chat' | 'messages' | 'responses';
  /** The call_id the follow-up's function_call_output answers; the replay puts the given one in its place. */
  toolCallId: string | null;
  request: { method: 'POST'; path: string; headers: Record<string, string>; body: Record<string, any> };
}

const DIR = fixturePath('clients');
const load = (file: string): ClientFixture => JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8'));
const CLIENTS = readdirSync(DIR)
  .filter((f) => f.endsWith('.first.json') && load(f).surface === 'responses')
  .map((f) => f.slice(0, -'.first.json'.length))
  .sort();
assume(CLIENTS.length === 2, 'two Responses client fixtures (Codex CLI, OpenAI Agents SDK)');

const MAX_OUTPUT = 64000;
const NAMESPACE_JOIN = '__';
const FREEFORM = { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] };

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
// As a plain catalogue has them: no hosted tool priced. Codex declares the hosted web_search
// tool on every turn all the same; the gateway takes it out and says so.
const model = (id: string, provider: string) => ({
  id,
  owned_by: 'fake',
  context_window: 400000,
  max_output_tokens: MAX_OUTPUT,
  ...PRICES,
  routes: [{ provider, model: 'tool_round', reasoning: true }],
});
const base = testCatalogue({
  upstream: fake.url,
  extra: {
    providers: [
      { id: 'fake-responses', dialect: 'responses', base_url: `${fake.url}/v1`, api_key: { env: 'FAKE_OPENAI_KEY' } },
    ],
    models: [model('rr-an', 'fake-anthropic'), model('rr-oa', 'fake-openai'), model('rr-rs', 'fake-responses')],
  },
});
const gw = await startTestGateway(t, { upstream: fake.url, catalogue: base });
const user = await gw.user('100');

const TARGETS = [
  { model: 'rr-an', dialect: 'anthropic' as const, path: '/v1/messages' },
  { model: 'rr-oa', dialect: 'openai' as const, path: '/v1/chat/completions' },
  { model: 'rr-rs', dialect: 'responses' as const, path: '/v1/responses' },
];

/** Sends a fixture as its client would, with this test's key and the given model. */
async function send(fx: ClientFixture, modelId: string, body = fx.request.body) {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(fx.request.headers)) headers[k] = v.replace('ar-REPLACED-BY-THE-TEST', user.key);
  const before = fake.requests.length;
  const res = await request(`${gw.url}${fx.request.path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...body, model: modelId }),
  });
  const text = await res.body.text();
  const upstream: RecordedRequest | undefined = fake.requests.length > before ? fake.requests.at(-1) : undefined;
  return {
    status: res.statusCode,
    contentType: String(res.headers['content-type'] ?? ''),
    dropped: res.headers['x-airouter-dropped-tools'],
    text,
    upstream,
  };
}

/** SSE text → its events, each with its `event:` name and parsed data. */
function events(text: string): { event: string | undefined; data: any }[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      return { event, data: JSON.parse(data.join('\n')) };
    });
}

/** The response as the client reads it: the JSON body, or the streamed `response.completed`'s. */
function read(t: Test, fx: ClientFixture, res: { contentType: string; text: string }): any {
  if (fx.request.body.stream !== true) {
    t.match(res.contentType, /application\/json/);
    return JSON.parse(res.text);
  }
  t.match(res.contentType, /text\/event-stream/);
  const evs = events(res.text);
  t.ok(
    evs.every((e) => e.event === undefined || e.event === e.data.type),
    "each event line names its data's type",
  );
  t.equal(evs[0]?.data.type, 'response.created', 'the stream opens with response.created');
  const last = evs.at(-1)!;
  t.equal(last.data.type, 'response.completed', 'and closes with response.completed');
  const seqs = evs.map((e) => e.data.sequence_number);
  t.same(
    seqs,
    seqs.map((_, i) => i),
    'sequence numbers count from 0',
  );
  return last.data.response;
}

/** Declared tools as the IR names them: functions and freeform tools, namespaced ones joined. */
function declared(body: Record<string, any>): { name: string; freeform: boolean }[] {
  return (body.tools ?? []).flatMap((tool: any) => {
    if (tool.type === 'function' || tool.type === 'custom')
      return [{ name: tool.name, freeform: tool.type === 'custom' }];
    if (tool.type === 'namespace')
      return declared({ tools: tool.tools }).map((x) => ({ ...x, name: `${tool.name}${NAMESPACE_JOIN}${x.name}` }));
    return []; // hosted (web_search): the vendor's, not sent to a model that has no such tool
  });
}

/** The texts a client gave as instructions: `instructions` and developer/system messages. */
function instructionTexts(body: Record<string, any>): string[] {
  const texts: string[] = typeof body.instructions === 'string' ? [body.instructions] : [];
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (item.role !== 'developer' && item.role !== 'system') continue;
    if (typeof item.content === 'string') texts.push(item.content);
    else for (const c of item.content) if (typeof c.text === 'string') texts.push(c.text);
  }
  return texts;
}

const CLIENT_TOOL_TYPES = new Set(['function', 'custom', 'namespace']);
/** The hosted tools a body declares (web_search): none is priced here. */
const hostedTools = (body: Record<string, any>): string[] =>
  (body.tools ?? []).map((x: any) => x.type).filter((type: string) => !CLIENT_TOOL_TYPES.has(type));

/** What a Responses provider must receive: the client's body, bar the model, the output cap and the hosted tools. */
function passThroughBody(body: Record<string, any>): Record<string, unknown> {
  const tools = body.tools?.filter((x: any) => CLIENT_TOOL_TYPES.has(x.type));
  return {
    ...body,
    model: 'tool_round',
    max_output_tokens: Math.min(MAX_OUTPUT, body.max_output_tokens ?? MAX_OUTPUT),
    ...(tools ? { tools } : {}),
  };
}

/** Checks of a request mapped to a chat or Anthropic upstream. */
function checkMapped(t: Test, fx: ClientFixture, up: RecordedRequest, target: (typeof TARGETS)[number]) {
  const sent = fx.request.body;
  const body = up.body;
  const json = JSON.stringify(body);
  const tools = declared(sent);
  const upTools = body.tools.map((x: any) =>
    target.dialect === 'openai'
      ? { name: x.function.name, schema: x.function.parameters }
      : { name: x.name, schema: x.input_schema },
  );
  t.same(
    upTools.map((x: any) => x.name),
    tools.map((x) => x.name),
    'every function and namespaced tool, in order; hosted tools dropped',
  );
  for (const [i, tool] of tools.entries()) {
    if (tool.freeform)
      t.match(upTools[i].schema, FREEFORM, `${tool.name}: a freeform tool → a function of one input string`);
  }
  t.notOk(json.includes('"web_search"'), 'no hosted tool reaches a model that has none');
  t.notOk(
    json.includes('encrypted_content') || json.includes('"reasoning"'),
    'no reasoning item or include is forwarded',
  );
  for (const field of [
    'input',
    'instructions',
    'include',
    'store',
    'client_metadata',
    'prompt_cache_key',
    'parallel_tool_calls',
    'max_output_tokens',
  ]) {
    if (target.dialect === 'anthropic' || field !== 'parallel_tool_calls')
      t.notOk(field in body, `${field} is not sent to a ${target.dialect}-dialect upstream`);
  }
  const instructions = instructionTexts(sent);
  t.ok(instructions.length > 0);
  if (target.dialect === 'openai') {
    const systems = body.messages.filter((m: any) => m.role === 'system');
    const systemText = systems
      .map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text).join('\n')))
      .join('\n');
    t.ok(
      instructions.every((x) => systemText.includes(x)),
      'instructions and developer messages → system messages',
    );
    t.equal(body.messages[0].role, 'system', 'which lead');
    t.notOk(body.messages.some((m: any) => m.role === 'developer'));
  } else {
    const system = typeof body.system === 'string' ? body.system : body.system.map((b: any) => b.text).join('\n');
    t.ok(
      instructions.every((x) => system.includes(x)),
      'instructions and developer messages → the system prompt',
    );
    t.ok(
      body.messages.every((m: any) => m.role === 'user' || m.role === 'assistant'),
      'only user and assistant turns',
    );
    t.ok(body.tools.every((x: any) => x.input_schema?.type === 'object'));
  }
}

for (const name of CLIENTS) {
  const first = load(`${name}.first.json`);
  const followUp = load(`${name}.follow-up.json`);
  for (const target of TARGETS) {
    t.test(
      `${name} → ${target.model} (${target.dialect === 'responses' ? 'same dialect' : 'mapped'}): a tool call, then its result`,
      async (t) => {
        const one = await send(first, target.model);
        t.equal(one.status, 200, one.text.slice(0, 300));
        const hosted = hostedTools(first.request.body);
        if (name === 'codex') t.same(hosted, ['web_search'], 'Codex declares web search');
        t.equal(
          one.dropped,
          hosted.length ? hosted.join(', ') : undefined,
          'the hosted tools taken out are named in the answer',
        );
        const up = one.upstream!;
        t.ok(up, 'the request reached the upstream');
        t.equal(up.path, target.path, `in the ${target.dialect} dialect`);
        if (target.dialect === 'responses')
          t.same(up.body, passThroughBody(first.request.body), 'forwarded as the client sent it (model and cap aside)');
        else checkMapped(t, first, up, target);

        const answer = read(t, first, one);
        t.equal(answer.object, 'response');
        t.equal(answer.status, 'completed');
        const calls = answer.output.filter((o: any) => o.type === 'function_call' || o.type === 'custom_tool_call');
        t.equal(calls.length, 1, 'one tool call item');
        const call = calls[0];
        t.equal(call.name, declared(first.request.body)[0]!.name, 'naming the first declared tool');
        t.match(call.call_id, /\S/, 'with a call_id');

        // The client runs the tool and sends the result under the call_id it was given.
        t.ok(
          JSON.stringify(followUp.request.body).includes(followUp.toolCallId!),
          'the follow-up carries the captured call_id',
        );
        const body = JSON.parse(JSON.stringify(followUp.request.body).replaceAll(followUp.toolCallId!, call.call_id));
        const two = await send(followUp, target.model, body);
        t.equal(two.status, 200, two.text.slice(0, 300));
        const final = read(t, followUp, two);
        const texts = final.output
          .filter((o: any) => o.type === 'message')
          .flatMap((m: any) => m.content.filter((c: any) => c.type === 'output_text').map((c: any) => c.text));
        t.same(texts, [TEXT_ANSWER], 'the model answers once the result is back');
        t.same(
          final.output.filter((o: any) => o.type === 'function_call'),
          [],
          'and calls nothing more',
        );

        const sent = two.upstream!.body;
        if (target.dialect === 'responses') {
          t.same(sent, passThroughBody(body), 'the follow-up is forwarded as sent too');
        } else if (target.dialect === 'anthropic') {
          const last = sent.messages.at(-1);
          const prev = sent.messages.at(-2);
          t.ok(
            last.content.some((b: any) => b.type === 'tool_result' && b.tool_use_id === call.call_id),
            'the function_call_output → a tool_result naming the call',
          );
          t.ok(
            prev.content.some((b: any) => b.type === 'tool_use' && b.id === call.call_id),
            'after the function_call as a tool_use',
          );
        } else {
          const last = sent.messages.at(-1);
          const prev = sent.messages.at(-2);
          t.same(
            [last.role, last.tool_call_id],
            ['tool', call.call_id],
            'the function_call_output → a tool message naming the call',
          );
          t.equal(prev.tool_calls[0].id, call.call_id, "after the function_call as the assistant's tool call");
        }
      },
    );
  }
}
