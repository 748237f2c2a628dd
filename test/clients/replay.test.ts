// The requests real clients send (test/fixtures/clients/, provenance in its README) replayed
// through the gateway unchanged, to an Anthropic-dialect and an OpenAI-dialect model, with the
// fake upstream answering a tool call and then, once the result is back, text. Each replay
// checks what the upstream received (pass-through bodies and query strings, or the mapped
// fields: mid-conversation system messages in place, reasoning_effort, dropped vendor-only
// fields) and that the answer carries the tool call in the client's own dialect.
import t from 'tap';
import type { Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { startFakeUpstream, TEXT_ANSWER, type RecordedRequest } from '../fake-upstream/server.js';
import { fixturePath } from '../fixtures/index.js';
import { PRICES, startTestGateway, testCatalogue } from '../helpers/gateway.js';
import {
  anthropicMessageReference,
  anthropicStreamReference,
  assume,
  openaiCompletionReference,
  openaiStreamReference,
  rawSequenceProblems,
  type Reference,
} from '../helpers/messages.js';

interface ClientFixture {
  client: string;
  surface: 'chat' | 'messages' | 'responses';
  /** The tool call id the follow-up answers; the replay puts the id it was given in its place. */
  toolCallId: string | null;
  request: { method: 'POST'; path: string; headers: Record<string, string>; body: Record<string, any> };
}

const DIR = fixturePath('clients');
const load = (file: string): ClientFixture => JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8'));
// Responses-surface fixtures (Codex, the Agents SDK) are replayed by replay-responses.test.ts, Gemini CLI's by replay-gemini.test.ts.
const CLIENTS = readdirSync(DIR)
  .filter((f) => f.endsWith('.first.json') && !['responses', 'gemini'].includes(load(f).surface))
  .map((f) => f.slice(0, -'.first.json'.length))
  .sort();
assume(
  CLIENTS.length === 7,
  'seven client fixtures (Claude Code 2.1.197 and 2.1.332, opencode, LangChain ×2, AI SDK ×2)',
);

/** Claude Code, any release: the checks of its mapped fields apply to each. */
const isClaudeCode = (name: string) => name === 'claude-code' || name.startsWith('claude-code-');

const MAX_OUTPUT = 64000;
const model = (id: string, provider: string, extra: object = {}) => ({
  id,
  owned_by: 'fake',
  context_window: 200000,
  max_output_tokens: MAX_OUTPUT,
  ...PRICES,
  routes: [{ provider, model: 'tool_round', ...extra }],
});

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const base = testCatalogue({ upstream: fake.url });
const gw = await startTestGateway(t, {
  upstream: fake.url,
  catalogue: {
    ...base,
    models: [
      ...base.models,
      model('rt-an', 'fake-anthropic'),
      model('rt-oa', 'fake-openai', { reasoning: true }),
      model('rt-oa-plain', 'fake-openai', { reasoning: false }),
    ],
  },
});
const user = await gw.user('100');

const TARGETS = [
  { model: 'rt-an', dialect: 'anthropic' as const },
  { model: 'rt-oa', dialect: 'openai' as const },
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
  return { status: res.statusCode, text, upstream };
}

/** The answer as the client reads it, in the client's own dialect. */
function read(t: Test, fx: ClientFixture, text: string): Reference {
  const stream = fx.request.body.stream === true;
  if (fx.surface === 'messages') {
    if (!stream) return anthropicMessageReference(JSON.parse(text));
    t.same(rawSequenceProblems(text), [], 'a valid Anthropic event stream');
    return anthropicStreamReference(text);
  }
  if (!stream) return openaiCompletionReference(JSON.parse(text));
  t.ok(text.trimEnd().endsWith('data: [DONE]'), 'the chat stream ends with [DONE]');
  return openaiStreamReference(text);
}

const declaredTools = (body: Record<string, any>) => body.tools.map((x: any) => x.name ?? x.function.name);
const roles = (body: any) => body.messages.map((m: any) => m.role);

/** What a same-dialect route must forward: the client's body, bar the model and the output cap. */
function passThroughBody(fx: ClientFixture): Record<string, unknown> {
  const body: Record<string, any> = { ...fx.request.body, model: 'tool_round' };
  const cap = Math.min(MAX_OUTPUT, body.max_tokens ?? MAX_OUTPUT);
  if (fx.surface === 'messages') body.max_tokens = cap;
  else {
    body.max_tokens = cap;
    if (body.stream) body.stream_options = { ...body.stream_options, include_usage: true };
  }
  return body;
}

/** Checks of a translated request the upstream received, by client. */
function checkTranslated(
  t: Test,
  name: string,
  fx: ClientFixture,
  up: RecordedRequest,
  target: (typeof TARGETS)[number],
) {
  const body = up.body;
  t.equal(up.query, '', 'no query string on a translated request');
  if (target.dialect === 'openai') {
    t.equal(up.path, '/v1/chat/completions');
    for (const dropped of [
      'context_management',
      'thinking',
      'output_config',
      'metadata',
      'system',
      'max_tokens_to_sample',
    ]) {
      t.notOk(dropped in body, `${dropped} is not sent to an OpenAI-dialect upstream`);
    }
    t.equal(body.tools.length, fx.request.body.tools.length, 'every client tool');
    if (isClaudeCode(name)) {
      const blocks = fx.request.body.system.length;
      t.same(
        roles(body).slice(0, blocks + 2),
        [...Array(blocks).fill('system'), 'user', 'system'],
        'the mid-conversation system message stays after the first user turn',
      );
      t.same(
        body.messages.slice(0, blocks).map((m: any) => m.content),
        fx.request.body.system.map((b: any) => b.text),
        'the system blocks lead, in order',
      );
      t.equal(body.messages[blocks + 1].content, fx.request.body.messages[1].content[0].text);
      t.equal(body.reasoning_effort, 'high', 'adaptive thinking at effort high → reasoning_effort');
      t.equal(body.user, fx.request.body.metadata.user_id, 'metadata.user_id (a JSON string) → user');
      t.equal(body.max_tokens, fx.request.body.max_tokens, 'the cap reserved for');
    } else t.notOk('reasoning_effort' in body, 'no effort asked, none sent');
  } else {
    t.equal(up.path, '/v1/messages');
    t.notOk('stream_options' in body);
    t.notOk('reasoning_effort' in body);
    t.ok(
      body.messages.every((m: any) => m.role === 'user' || m.role === 'assistant'),
      'only user and assistant turns',
    );
    t.same(
      body.tools.map((x: any) => x.name),
      declaredTools(fx.request.body),
      'tools as Anthropic tools',
    );
    t.ok(body.tools.every((x: any) => x.input_schema?.type === 'object'));
    const systems = fx.request.body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.content);
    if (systems.length > 0) t.equal(body.system, systems.join('\n\n'), 'system messages → the system prompt');
  }
}

for (const name of CLIENTS) {
  const first = load(`${name}.first.json`);
  const followUp = load(`${name}.follow-up.json`);
  for (const target of TARGETS) {
    const same = (first.surface === 'messages') === (target.dialect === 'anthropic');
    t.test(
      `${name} → ${target.model} (${same ? 'same dialect' : 'translated'}): a tool call, then its result`,
      async (t) => {
        const one = await send(first, target.model);
        t.equal(one.status, 200, one.text.slice(0, 300));
        const up = one.upstream!;
        t.ok(up, 'the request reached the upstream');
        if (same) {
          t.same(up.body, passThroughBody(first), 'forwarded as the client sent it (model and cap aside)');
          t.equal(up.query, first.request.path.split('?')[1] ?? '', 'the query string is forwarded');
          if (isClaudeCode(name))
            t.equal(
              up.headers['anthropic-beta'],
              first.request.headers['anthropic-beta'],
              'every Claude Code beta is forwarded',
            );
        } else checkTranslated(t, name, first, up, target);

        const answer = read(t, first, one.text);
        t.equal(answer.tools.length, 1, "one tool call, in the client's dialect");
        const call = answer.tools[0]!;
        t.equal(call.name, declaredTools(first.request.body)[0], 'the tool the fake upstream chose');
        t.ok(call.id.length > 0);
        t.equal(answer.stop, first.surface === 'messages' ? 'tool_use' : 'tool_calls');

        // The client runs the tool and sends the result under the id it was given.
        const body = JSON.parse(JSON.stringify(followUp.request.body).replaceAll(followUp.toolCallId!, call.id));
        const two = await send(followUp, target.model, body);
        t.equal(two.status, 200, two.text.slice(0, 300));
        const final = read(t, followUp, two.text);
        t.equal(final.text, TEXT_ANSWER, 'the model answers once the result is back');
        t.same(final.tools, []);
        // The result is the last turn, bar system messages after it (Claude Code's tool changes).
        const turns = two.upstream!.body.messages.filter((m: any) => m.role !== 'system');
        const last = turns.at(-1);
        const prev = turns.at(-2);
        if (target.dialect === 'anthropic') {
          t.ok(
            last.content.some((b: any) => b.type === 'tool_result' && b.tool_use_id === call.id),
            'the tool_result names the call',
          );
          t.ok(
            prev.content.some((b: any) => b.type === 'tool_use' && b.id === call.id),
            'after the tool_use',
          );
        } else {
          t.same([last.role, last.tool_call_id], ['tool', call.id], 'a tool message names the call');
          t.equal(prev.tool_calls[0].id, call.id, "after the assistant's tool call");
        }
        if (isClaudeCode(name) && !same) {
          const blocks = followUp.request.body.system.length;
          const after = followUp.request.body.messages.at(-1).role === 'system' ? ['system'] : [];
          t.same(
            roles(two.upstream!.body),
            [...Array(blocks).fill('system'), 'user', 'system', 'assistant', 'tool', ...after],
            'each system message keeps its place in a longer conversation',
          );
        }
        if (isClaudeCode(name) && same) {
          t.equal(
            two.upstream!.headers['anthropic-beta'],
            followUp.request.headers['anthropic-beta'],
            "the follow-up's betas are forwarded too",
          );
          t.same(
            roles(two.upstream!.body),
            roles(followUp.request.body),
            'every message, system ones included, at its place',
          );
        }
      },
    );
  }
}

t.test('Claude Code to an OpenAI-dialect model that does not reason: no reasoning_effort', async (t) => {
  const fx = load('claude-code.first.json');
  const res = await send(fx, 'rt-oa-plain');
  t.equal(res.status, 200);
  t.notOk('reasoning_effort' in res.upstream!.body, 'a model that does not reason would refuse the field');
  t.same(roles(res.upstream!.body), [...Array(fx.request.body.system.length).fill('system'), 'user', 'system']);
});
