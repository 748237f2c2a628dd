// Every recorded vendor answer in test/fixtures, replayed by the fake upstream and
// translated to the other dialect, says the same thing: text, reasoning, tool calls, usage and
// stop reason, compared with what this file computes from the recording itself. OpenAI
// recordings go to the messages surface through oa-model; Anthropic ones to the chat surface
// through an-model. (Replay answers with the file whatever the stream flag says, so .sse files
// are requested with stream: true and .json files without.)
import t from 'tap';
import type { Test } from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeUpstream } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import {
  anthropicMessageReference,
  anthropicStreamReference,
  assume,
  FINISH_FOR_STOP,
  openaiCompletionReference,
  openaiStreamReference,
  readSSE,
  sequenceProblems,
  STOP_FOR_FINISH,
  type Reference,
} from '../helpers/messages.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

const FIXTURES = FIXTURES_DIR;
const list = (dir: string, ext: string) =>
  readdirSync(path.join(FIXTURES, dir))
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => `${dir}/${f}`);
const read = (rel: string) => readFileSync(path.join(FIXTURES, rel), 'utf8');

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('100');
const anthropic = new Anthropic({ baseURL: gw.url, apiKey: user.key, maxRetries: 0 });
const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: user.key, maxRetries: 0 });
const replay = (rel: string) => `[[replay:${rel}]]`;

const OPENAI_SSE = list('openai', '.sse');
const OPENAI_JSON = list('openai', '.json');
const ANTHROPIC_SSE = [...list('anthropic', '.sse'), ...list('anthropic/docs', '.sse')];
const ANTHROPIC_JSON = list('anthropic', '.json');
/** Recordings that end in an error event instead of an answer. */
const isErrorStream = (rel: string) => anthropicStreamReference(read(rel)).error !== undefined;

// The recordings this file was written against (a missing directory would otherwise pass quietly).
assume(
  OPENAI_SSE.length >= 6 && OPENAI_JSON.length >= 5 && ANTHROPIC_SSE.length >= 12 && ANTHROPIC_JSON.length >= 5,
  'the fixture set',
);
assume(ANTHROPIC_SSE.filter(isErrorStream).length === 2, 'two recorded streams that end in an error');

// ------------------------------------------------------------------ OpenAI recordings → /v1/messages

function checkMessage(t: Test, m: Anthropic.Message, ref: Reference) {
  const text = m.content
    .filter((b): b is Anthropic.TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const thinking = m.content
    .filter((b): b is Anthropic.ThinkingBlock => b.type === 'thinking')
    .map((b) => b.thinking)
    .join('');
  const tools = m.content
    .filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
    .map((b) => ({ id: b.id, name: b.name, input: b.input }));
  t.equal(text, ref.text, 'text');
  t.equal(thinking, ref.thinking, 'reasoning');
  t.same(tools, ref.tools, 'tool calls: ids, names, arguments');
  t.same(
    {
      input: m.usage.input_tokens,
      output: m.usage.output_tokens,
      cacheRead: m.usage.cache_read_input_tokens,
      cacheWrite: m.usage.cache_creation_input_tokens,
    },
    ref.usage,
    'usage (input without cached tokens)',
  );
  t.equal(m.stop_reason, STOP_FOR_FINISH[ref.stop!], `finish_reason ${ref.stop} → ${STOP_FOR_FINISH[ref.stop!]}`);
  t.equal(m.model, 'oa-model', 'named after the catalogue model');
  t.equal(m.role, 'assistant');
}

for (const rel of OPENAI_SSE) {
  t.test(`${rel} → /v1/messages stream`, async (t) => {
    const ref = openaiStreamReference(read(rel));
    assume(ref.text !== '' || ref.tools.length > 0, `${rel} says something`);
    const stream = anthropic.messages.stream({
      model: 'oa-model',
      max_tokens: 1000,
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on('streamEvent', (e) => events.push(e));
    const m = await stream.finalMessage();
    t.same(sequenceProblems(events), [], 'a valid Anthropic event sequence');
    checkMessage(t, m, ref);
    // A tool_use's first input_json_delta is "" on Anthropic's wire; the gateway may skip it
    // but never sends argument text outside the block it belongs to.
    const starts = events.filter((e): e is Anthropic.RawContentBlockStartEvent => e.type === 'content_block_start');
    t.same(
      starts.map((s) => s.content_block.type),
      [...(ref.text ? ['text'] : []), ...ref.tools.map(() => 'tool_use')],
    );
  });
}

for (const rel of OPENAI_JSON) {
  t.test(`${rel} → /v1/messages`, async (t) => {
    const ref = openaiCompletionReference(JSON.parse(read(rel)));
    const m = await anthropic.messages.create({
      model: 'oa-model',
      max_tokens: 1000,
      messages: [{ role: 'user', content: replay(rel) }],
    });
    checkMessage(t, m, ref);
  });
}

// ------------------------------------------------------------------ Anthropic recordings → /v1/chat/completions

function checkCompletion(
  t: Test,
  got: {
    text: string;
    reasoning: string;
    tools: Array<{ id: string; name: string; input: unknown }>;
    usage: any;
    finish: string | null | undefined;
  },
  ref: Reference,
) {
  t.equal(got.text, ref.text, 'text');
  t.equal(got.reasoning, ref.thinking, 'reasoning_content');
  t.same(got.tools, ref.tools, 'tool calls: ids, names, arguments');
  const prompt = ref.usage.input + ref.usage.cacheRead + ref.usage.cacheWrite;
  t.same(
    [
      got.usage?.prompt_tokens,
      got.usage?.completion_tokens,
      got.usage?.total_tokens,
      got.usage?.cached_tokens,
      got.usage?.prompt_tokens_details?.cached_tokens,
    ],
    [prompt, ref.usage.output, prompt + ref.usage.output, ref.usage.cacheRead, ref.usage.cacheRead],
    'usage: prompt_tokens = input + cache_read + cache_creation',
  );
  t.equal(got.finish, FINISH_FOR_STOP[ref.stop!], `stop_reason ${ref.stop} → ${FINISH_FOR_STOP[ref.stop!]}`);
}

for (const rel of ANTHROPIC_SSE.filter((f) => !isErrorStream(f))) {
  t.test(`${rel} → /v1/chat/completions stream`, async (t) => {
    const ref = anthropicStreamReference(read(rel));
    const stream = await openai.chat.completions.create({
      model: 'an-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const calls = new Map<number, { id: string; name: string; args: string }>();
    for (const c of chunks) {
      for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
        const call = calls.get(tc.index) ?? { id: '', name: '', args: '' };
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name = tc.function.name;
        call.args += tc.function?.arguments ?? '';
        calls.set(tc.index, call);
      }
    }
    t.same(
      [...calls.keys()],
      [...calls.keys()].map((_, i) => i),
      'tool_call indices 0, 1… count calls only',
    );
    checkCompletion(
      t,
      {
        text: chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''),
        reasoning: chunks.map((c) => (c.choices[0]?.delta as any)?.reasoning_content ?? '').join(''),
        tools: [...calls.values()].map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.args) })),
        usage: chunks.find((c) => c.usage)?.usage,
        finish: chunks.map((c) => c.choices[0]?.finish_reason).find(Boolean),
      },
      ref,
    );
    t.equal(chunks.filter((c) => c.choices[0]?.finish_reason).length, 1, 'one finish chunk');
    t.ok(chunks.every((c) => c.model === 'an-model'));
    t.notMatch(JSON.stringify(chunks), /signature/, 'signatures have no place on the chat surface');
  });
}

for (const rel of ANTHROPIC_JSON) {
  t.test(`${rel} → /v1/chat/completions`, async (t) => {
    const ref = anthropicMessageReference(JSON.parse(read(rel)));
    const r = await openai.chat.completions.create({
      model: 'an-model',
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const msg = r.choices[0].message as any;
    checkCompletion(
      t,
      {
        text: msg.content ?? '',
        reasoning: msg.reasoning_content ?? '',
        tools: (msg.tool_calls ?? []).map((c: any) => ({
          id: c.id,
          name: c.function.name,
          input: JSON.parse(c.function.arguments),
        })),
        usage: r.usage,
        finish: r.choices[0].finish_reason,
      },
      ref,
    );
    t.equal(r.model, 'an-model');
  });
}

// ------------------------------------------------------------------ errors inside a recorded stream

for (const rel of ANTHROPIC_SSE.filter(isErrorStream)) {
  t.test(`${rel} → /v1/chat/completions ends in the chat surface's error event`, async (t) => {
    const ref = anthropicStreamReference(read(rel));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'an-model', stream: true, messages: [{ role: 'user', content: replay(rel) }] }),
    });
    t.equal(res.status, 200);
    const events = readSSE(await res.text());
    const last = events.at(-1)!;
    t.equal(last.event, undefined, 'a plain data event, as OpenAI sends');
    t.same(Object.keys(last.data), ['error'], 'data: {"error": …}');
    t.equal(last.data.error.type, 'overloaded', "Anthropic overloaded_error → the chat surface's overloaded");
    t.equal(last.data.error.message, ref.error!.message);
    t.notOk(
      events.some((e) => e.data === '[DONE]'),
      'no [DONE] after an error',
    );
    t.notOk(
      events.some((e) => e.data?.choices?.[0]?.finish_reason),
      'no finish_reason: the answer did not finish',
    );
    const text = events.map((e) => e.data?.choices?.[0]?.delta?.content ?? '').join('');
    t.equal(text, ref.text, 'the text before the failure was delivered');

    // The openai client raises on that event.
    const stream = await openai.chat.completions.create({
      model: 'an-model',
      stream: true,
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const err = await (async () => {
      for await (const _ of stream);
    })().catch((e) => e);
    t.ok(err instanceof OpenAI.APIError, 'the SDK raises an APIError');
  });

  t.test(`${rel} → /v1/messages (same dialect) ends in event: error`, async (t) => {
    const ref = anthropicStreamReference(read(rel));
    const stream = anthropic.messages.stream({
      model: 'an-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const err = await stream.finalMessage().catch((e) => e);
    t.ok(err instanceof Anthropic.APIError);
    t.equal(err.error?.error?.type, ref.error!.type);
  });
}

// ------------------------------------------------------------------ same dialect: untouched

/** What the client gets of a recorded answer: the model named as the catalogue's id it asked for. */
const asModel = (text: string, model: string) =>
  text.replace(/"model":"(?:[^"\\]|\\.)*"/g, `"model":${JSON.stringify(model)}`);

t.test("every recorded Anthropic stream passes through /v1/messages byte for byte, bar the model's name", async (t) => {
  for (const rel of ANTHROPIC_SSE) {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'an-model',
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: replay(rel) }],
      }),
    });
    t.equal(await res.text(), asModel(read(rel), 'an-model'), rel);
  }
});

t.test("every recorded Anthropic answer passes through /v1/messages unchanged, bar the model's name", async (t) => {
  for (const rel of ANTHROPIC_JSON) {
    const m = await anthropic.messages.create({
      model: 'an-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: replay(rel) }],
    });
    const recorded = JSON.parse(read(rel));
    t.same(JSON.parse(JSON.stringify(m)), 'model' in recorded ? { ...recorded, model: 'an-model' } : recorded, rel);
  }
});
