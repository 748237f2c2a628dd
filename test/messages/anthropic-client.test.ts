// The messages surface with the official Anthropic client, against both upstream dialects:
// an-model is a same-dialect pass-through, oa-model is translated from an OpenAI upstream.
// Answers, streams (with the exact event sequence), tool round trips, thinking, auth forms,
// and what the upstream is sent (headers, key, the tool_result in its own dialect).
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream, FAKE_SIGNATURE, THINKING_TEXT, TEXT_ANSWER } from '../fake-upstream/server.js';
import { startTestGateway } from '../helpers/gateway.js';
import { sequenceProblems, rawSequenceProblems, readSSE } from '../helpers/messages.js';

const fake = await startFakeUpstream();
t.teardown(() => fake.close());
const gw = await startTestGateway(t, { upstream: fake.url });
const user = await gw.user('10');
const client = new Anthropic({ baseURL: gw.url, apiKey: user.key, maxRetries: 0 });

type Model = 'an-model' | 'oa-model';
const MODELS: Model[] = ['an-model', 'oa-model'];
const UPSTREAM_PATH: Record<Model, string> = { 'an-model': '/v1/messages', 'oa-model': '/v1/chat/completions' };

const tools: Anthropic.Tool[] = [
  {
    name: 'get_weather',
    description: 'Weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' } } },
  },
  { name: 'get_time', input_schema: { type: 'object', properties: { tz: { type: 'string' } } } },
];
const user1 = (content: Anthropic.MessageParam['content']): Anthropic.MessageParam[] => [{ role: 'user', content }];
const textOf = (m: Anthropic.Message) =>
  m.content
    .filter((b): b is Anthropic.TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
const toolUses = (m: Anthropic.Message) => m.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');

/** Streams with the SDK's helper and keeps every raw event it saw. */
async function streamed(params: Anthropic.MessageCreateParamsNonStreaming) {
  const stream = client.messages.stream(params);
  const events: Anthropic.MessageStreamEvent[] = [];
  stream.on('streamEvent', (e) => events.push(e));
  const message = await stream.finalMessage();
  return { message, events };
}

/** The upstream's last request on the model's path. */
const lastUpstream = (model: Model) => fake.requests.filter((r) => r.path === UPSTREAM_PATH[model]).at(-1)!;

for (const model of MODELS) {
  t.test(`${model}: create answers with an Anthropic message`, async (t) => {
    const m = await client.messages.create({ model, max_tokens: 200, messages: user1('Say hello') });
    t.equal(m.type, 'message');
    t.equal(m.role, 'assistant');
    t.match(m.id, /^msg_/);
    t.same(m.content, [{ type: 'text', text: TEXT_ANSWER }]);
    t.equal(m.stop_reason, 'end_turn');
    t.equal(m.stop_sequence, null);
    t.ok(m.usage.input_tokens > 0, 'input counted');
    t.equal(m.usage.output_tokens, 5, 'one token per word the fake said');
    // The SDK reads the request id from `request-id`, as on Anthropic's own answers.
    t.match(m._request_id, /\S/, 'the SDK sees a request id');
  });

  t.test(`${model}: stream, finalMessage and a valid event sequence`, async (t) => {
    const { message, events } = await streamed({ model, max_tokens: 200, messages: user1('Say hello') });
    t.equal(textOf(message), TEXT_ANSWER);
    t.equal(message.stop_reason, 'end_turn');
    t.same(sequenceProblems(events), [], 'message_start, blocks 0.. in order, message_delta, message_stop');
    t.equal(events.filter((e) => e.type === 'content_block_delta').length, 5, 'one delta per word');
    t.ok(message.usage.input_tokens > 0, 'input known by the end of the stream');
    t.equal(message.usage.output_tokens, 5);

    // The same through create({stream: true}): an async iterable of the raw events.
    const raw = await client.messages.create({ model, max_tokens: 200, stream: true, messages: user1('Say hello') });
    const seen: Anthropic.RawMessageStreamEvent[] = [];
    for await (const e of raw) seen.push(e);
    t.same(sequenceProblems(seen), []);
    t.same(
      seen.map((e) => e.type),
      events.map((e) => e.type),
      'same sequence as the helper saw',
    );
  });

  t.test(`${model}: raw stream bytes: event lines match payloads, text/event-stream`, async (t) => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, max_tokens: 200, stream: true, messages: user1('[[tools]]'), tools }),
    });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/event-stream/);
    const text = await res.text();
    t.same(rawSequenceProblems(text), []);
    t.notMatch(text, /\[DONE\]/, 'no OpenAI terminator on the messages surface');
    const starts = readSSE(text)
      .filter((e) => e.event === 'content_block_start')
      .map((e) => e.data.content_block.type);
    // Claude says a few words before its call; an OpenAI model answers with the call only.
    t.same(starts, model === 'an-model' ? ['text', 'tool_use'] : ['tool_use']);
    const firstJson = readSSE(text).find((e) => e.data.delta?.type === 'input_json_delta');
    t.ok(firstJson, 'tool input streams as input_json_delta');
  });

  t.test(`${model}: tool_use, then tool_result back, then the answer`, async (t) => {
    const first = await client.messages.create({
      model,
      max_tokens: 200,
      tools,
      messages: user1('Weather in Paris? [[tools]]'),
    });
    t.equal(first.stop_reason, 'tool_use');
    const [call] = toolUses(first);
    t.equal(toolUses(first).length, 1);
    t.equal(call.name, 'get_weather');
    t.same(call.input, { city: 'Paris' });
    t.ok(call.id.length > 0, 'the call has an id');

    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Weather in Paris? [[tools]]' },
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: call.id, content: 'sunny, 21 C' },
          { type: 'text', text: 'Thanks. [[text]]' },
        ],
      },
    ];
    const second = await client.messages.create({ model, max_tokens: 200, tools, messages: history });
    t.equal(second.stop_reason, 'end_turn');
    t.equal(textOf(second), TEXT_ANSWER);

    // [[echo]]: the upstream answers with the body it received, which shows the mapping.
    history[2] = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: call.id, content: 'sunny, 21 C' },
        { type: 'text', text: 'Thanks. [[echo]]' },
      ],
    };
    const echoed = JSON.parse(
      textOf(await client.messages.create({ model, max_tokens: 200, tools, messages: history })),
    );
    t.same(echoed, lastUpstream(model).body, 'the echo is the upstream request');
    if (model === 'oa-model') {
      const msgs = echoed.messages;
      const assistant = msgs.find((m: any) => m.role === 'assistant');
      t.same(
        assistant.tool_calls.map((c: any) => [c.id, c.type, c.function.name, JSON.parse(c.function.arguments)]),
        [[call.id, 'function', 'get_weather', { city: 'Paris' }]],
      );
      t.equal(assistant.content, null, 'a pure tool-call turn has null content, as OpenAI sends it');
      const toolMsg = msgs.find((m: any) => m.role === 'tool');
      t.same(
        toolMsg,
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' },
        'tool_result → a tool message with tool_call_id',
      );
      t.ok(
        msgs.indexOf(toolMsg) < msgs.findLastIndex((m: any) => m.role === 'user'),
        'the tool message comes before the user text of that turn',
      );
      t.same(
        echoed.tools.map((x: any) => [x.type, x.function.name]),
        [
          ['function', 'get_weather'],
          ['function', 'get_time'],
        ],
      );
      t.equal(echoed.tools[0].function.description, 'Weather in a city');
      t.same(echoed.tools[0].function.parameters, tools[0].input_schema);
      t.equal(echoed.max_tokens, 200);
      t.equal(echoed.model, 'upstream-oa');
    } else {
      const last = echoed.messages.at(-1);
      t.same(
        last.content[0],
        { type: 'tool_result', tool_use_id: call.id, content: 'sunny, 21 C' },
        'tool_result block as sent',
      );
      t.same(
        echoed.messages[1].content,
        JSON.parse(JSON.stringify(first.content)),
        'the assistant turn went back unchanged',
      );
      t.same(echoed.tools, tools);
      t.equal(echoed.model, 'upstream-an');
    }
  });

  t.test(`${model}: parallel tool calls, created and streamed`, async (t) => {
    const want = [
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'Europe/Paris' }],
    ];
    const made = await client.messages.create({
      model,
      max_tokens: 200,
      tools,
      messages: user1('both [[parallel_tools]]'),
    });
    t.equal(made.stop_reason, 'tool_use');
    t.same(
      toolUses(made).map((b) => [b.name, b.input]),
      want,
    );
    const { message, events } = await streamed({
      model,
      max_tokens: 200,
      tools,
      messages: user1('both [[parallel_tools]]'),
    });
    t.same(sequenceProblems(events), []);
    t.same(
      toolUses(message).map((b) => [b.name, b.input]),
      want,
    );
    const ids = toolUses(message).map((b) => b.id);
    t.equal(new Set(ids).size, 2, 'distinct ids');
    t.equal(message.stop_reason, 'tool_use');
    // Anthropic numbers blocks by position: after a text block the calls are 1 and 2.
    const starts = events.filter((e): e is Anthropic.RawContentBlockStartEvent => e.type === 'content_block_start');
    t.same(
      starts.map((e) => e.index),
      starts.map((_, i) => i),
    );
    t.same(
      message.content.map((b) => b.type),
      model === 'an-model' ? ['text', 'tool_use', 'tool_use'] : ['tool_use', 'tool_use'],
    );
  });

  t.test(`${model}: stop reasons max_tokens and stop_sequence`, async (t) => {
    const cut = await client.messages.create({ model, max_tokens: 3, messages: user1('[[max_tokens]]') });
    t.equal(cut.stop_reason, 'max_tokens');
    t.equal(textOf(cut), 'Hello from the');
    const seq = await client.messages.create({
      model,
      max_tokens: 200,
      stop_sequences: ['STOP'],
      messages: user1('[[stop_sequence]]'),
    });
    const sent = lastUpstream(model).body;
    if (model === 'an-model') {
      t.equal(seq.stop_reason, 'stop_sequence');
      t.equal(seq.stop_sequence, 'STOP');
      t.same(sent.stop_sequences, ['STOP']);
    } else {
      // OpenAI says only "stop": which sequence matched (if any) is not on its wire.
      t.equal(seq.stop_reason, 'end_turn');
      t.equal(seq.stop_sequence, null);
      t.same(sent.stop, ['STOP'], 'stop_sequences → stop');
    }
  });
}

t.test('an-model thinking: the signature comes back byte for byte, in create and stream', async (t) => {
  const made = await client.messages.create({
    model: 'an-model',
    max_tokens: 2000,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: user1('think [[thinking]]'),
  });
  const block = made.content[0] as Anthropic.ThinkingBlock;
  t.equal(block.type, 'thinking');
  t.equal(block.thinking, THINKING_TEXT);
  t.equal(block.signature, FAKE_SIGNATURE);
  t.equal(textOf(made), TEXT_ANSWER);

  const { message, events } = await streamed({
    model: 'an-model',
    max_tokens: 2000,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: user1('think [[thinking]]'),
  });
  t.same(sequenceProblems(events), []);
  const sb = message.content[0] as Anthropic.ThinkingBlock;
  t.equal(sb.type, 'thinking');
  t.equal(sb.thinking, THINKING_TEXT);
  t.equal(sb.signature, FAKE_SIGNATURE);
  const sigs = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta');
  t.equal(sigs.length, 1, 'one signature_delta');
  const stopAt = events.findIndex((e) => e.type === 'content_block_stop' && e.index === 0);
  t.equal(events.indexOf(sigs[0]), stopAt - 1, 'right before the block stops');

  // Sent back in the next turn, the upstream gets the very same signature.
  const echoed = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'an-model',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          { role: 'user', content: 'think [[thinking]]' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: 'go on [[echo]]' },
        ],
      }),
    ),
  );
  t.equal(echoed.messages[1].content[0].signature, FAKE_SIGNATURE);
  t.same(echoed.thinking, { type: 'enabled', budget_tokens: 1024 });
});

t.test('oa-model thinking: reasoning_content becomes a thinking block', async (t) => {
  const made = await client.messages.create({
    model: 'oa-model',
    max_tokens: 200,
    messages: user1('think [[thinking]]'),
  });
  t.same(
    made.content.map((b) => b.type),
    ['thinking', 'text'],
  );
  const block = made.content[0] as Anthropic.ThinkingBlock;
  t.equal(block.thinking, THINKING_TEXT);
  t.equal(block.signature, '', 'unsigned reasoning: an empty signature, never an invented one');
  t.equal(textOf(made), TEXT_ANSWER);

  const { message, events } = await streamed({
    model: 'oa-model',
    max_tokens: 200,
    messages: user1('think [[thinking]]'),
  });
  t.same(sequenceProblems(events), []);
  t.same(
    message.content.map((b) => b.type),
    ['thinking', 'text'],
  );
  t.equal((message.content[0] as Anthropic.ThinkingBlock).thinking, THINKING_TEXT);
  t.equal(events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'thinking_delta').length, 2);
  t.equal(
    events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'signature_delta').length,
    0,
    'no signature to send',
  );

  // Replayed to the OpenAI upstream, the unsigned thinking is dropped and the text kept.
  const echoed = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'oa-model',
        max_tokens: 200,
        messages: [
          { role: 'user', content: 'think [[thinking]]' },
          { role: 'assistant', content: message.content },
          { role: 'user', content: 'go on [[echo]]' },
        ],
      }),
    ),
  );
  t.same(echoed.messages[1], { role: 'assistant', content: TEXT_ANSWER });
});

t.test('an Anthropic client asking oa-model for thinking: the budget has no OpenAI counterpart', async (t) => {
  const echoed = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'oa-model',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: user1('[[echo]]'),
      }),
    ),
  );
  t.notOk('thinking' in echoed, 'not forwarded');
  t.notOk('reasoning_effort' in echoed);
  t.equal(echoed.max_tokens, 1000, "the cap, clamped to the model's max_output_tokens: what was reserved for");
});

t.test('both auth forms: x-api-key and Authorization: Bearer (apiKey and authToken)', async (t) => {
  fake.reset();
  // Recent SDKs send apiKey as a Bearer token; this one included.
  const bearer = await client.messages.create({ model: 'an-model', max_tokens: 50, messages: user1('hi') });
  t.equal(textOf(bearer), TEXT_ANSWER);
  const token = new Anthropic({ baseURL: gw.url, authToken: user.key, apiKey: null, maxRetries: 0 });
  t.equal(
    textOf(await token.messages.create({ model: 'oa-model', max_tokens: 50, messages: user1('hi') })),
    TEXT_ANSWER,
  );
  // Older SDKs send x-api-key, which a default header reproduces.
  const legacy = new Anthropic({
    baseURL: gw.url,
    apiKey: null,
    authToken: null,
    defaultHeaders: { 'x-api-key': user.key },
    maxRetries: 0,
  });
  t.equal(
    textOf(await legacy.messages.create({ model: 'an-model', max_tokens: 50, messages: user1('hi') })),
    TEXT_ANSWER,
  );
  const raw = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oa-model', max_tokens: 50, messages: user1('hi') }),
  });
  t.equal(raw.status, 200);
  t.equal(fake.requests.length, 4, 'every form reached the upstream');
});

t.test('headers: anthropic-version by allow-list, anthropic-beta as sent, the provider key only', async (t) => {
  fake.reset();
  await client.messages.create(
    { model: 'an-model', max_tokens: 50, messages: user1('hi') },
    {
      headers: {
        'anthropic-beta': 'prompt-caching-2024-07-31,token-efficient-tools-2025-02-19,made-up-beta-2030-01-01',
      },
    },
  );
  const sdk = fake.requests.at(-1)!;
  t.equal(sdk.headers['anthropic-version'], '2026-10-21', 'the version this SDK sends is on the allow-list: forwarded');
  t.equal(
    sdk.headers['anthropic-beta'],
    'prompt-caching-2024-07-31,token-efficient-tools-2025-02-19,made-up-beta-2030-01-01',
    'every beta forwarded, one the gateway does not know included',
  );
  const future = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2099-01-01' },
    body: JSON.stringify({ model: 'an-model', max_tokens: 50, messages: user1('hi') }),
  });
  t.equal(future.status, 200, 'any date is accepted');
  t.equal(
    fake.requests.at(-1)!.headers['anthropic-version'],
    '2023-06-01',
    'one not on the allow-list is replaced by the default',
  );
  const older = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'an-model', max_tokens: 50, messages: user1('hi') }),
  });
  t.equal(older.status, 200);
  t.equal(fake.requests.at(-1)!.headers['anthropic-version'], '2023-06-01');

  const bare = await fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': user.key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'an-model', max_tokens: 50, messages: user1('hi') }),
  });
  t.equal(bare.status, 200);
  const plain = fake.requests.at(-1)!;
  t.equal(plain.headers['anthropic-version'], '2023-06-01', 'default version when absent');
  t.notOk('anthropic-beta' in plain.headers, 'no beta invented');

  for (const r of fake.requests) {
    t.equal(r.headers['x-api-key'], process.env.FAKE_ANTHROPIC_KEY, 'the upstream sees the provider key');
    t.notOk(r.headers.authorization, 'and no Authorization header');
    t.notMatch(JSON.stringify(r.headers), user.key, 'never the client key');
  }

  // The OpenAI upstream gets its own key as a Bearer token, and no Anthropic headers.
  await client.messages.create(
    { model: 'oa-model', max_tokens: 50, messages: user1('hi') },
    { headers: { 'anthropic-beta': 'x' } },
  );
  const oa = fake.requests.at(-1)!;
  t.equal(oa.path, '/v1/chat/completions');
  t.equal(oa.headers.authorization, `Bearer ${process.env.FAKE_OPENAI_KEY}`);
  t.notOk(oa.headers['anthropic-version'] || oa.headers['anthropic-beta'] || oa.headers['x-api-key']);
  t.notMatch(JSON.stringify(oa.headers), user.key);
});

t.test('unknown request fields: forwarded to an Anthropic upstream, dropped when translated', async (t) => {
  const extra = { top_k: 5, service_tier: 'auto', vendor_thing: { nested: [1, 'two'] }, metadata: { user_id: 'u-42' } };
  const an = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'an-model',
        max_tokens: 50,
        messages: user1('[[echo]]'),
        ...(extra as any),
      }),
    ),
  );
  for (const [k, v] of Object.entries(extra)) t.same(an[k], v, `${k} forwarded to the same dialect`);
  const oa = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'oa-model',
        max_tokens: 50,
        messages: user1('[[echo]]'),
        ...(extra as any),
      }),
    ),
  );
  t.notOk('top_k' in oa || 'service_tier' in oa || 'vendor_thing' in oa || 'metadata' in oa, 'no counterpart: dropped');
  t.equal(oa.user, 'u-42', 'metadata.user_id → user');
});

t.test('system prompt and image content are translated for an OpenAI upstream', async (t) => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const echoed = JSON.parse(
    textOf(
      await client.messages.create({
        model: 'oa-model',
        max_tokens: 50,
        system: [{ type: 'text', text: 'Be brief.' }],
        ...({ temperature: 0.5 } as object), // no longer in this SDK's types
        messages: user1([
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'text', text: 'what is this [[echo]]' },
        ]),
      }),
    ),
  );
  t.same(echoed.messages[0], { role: 'system', content: 'Be brief.' });
  t.same(echoed.messages[1].content, [
    { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    { type: 'text', text: 'what is this [[echo]]' },
  ]);
  t.equal(echoed.temperature, 0.5);
});

t.test('Anthropic server tools have no OpenAI counterpart: dropped, with a tool_choice that needs them', async (t) => {
  const params = {
    model: 'oa-model',
    max_tokens: 50,
    messages: user1('search the web [[echo]]'),
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
    tool_choice: { type: 'auto' },
  } as unknown as Anthropic.MessageCreateParamsNonStreaming;
  const echoed = JSON.parse(textOf(await client.messages.create(params)));
  t.notOk('tools' in echoed, 'the server tool is not sent');
  t.notOk('tool_choice' in echoed, 'nor a tool_choice OpenAI would reject without tools');
  const mixed = JSON.parse(
    textOf(
      await client.messages.create({
        ...params,
        tools: [...(params.tools as object[]), tools[0]],
        tool_choice: { type: 'any' },
      } as any),
    ),
  );
  t.same(
    mixed.tools.map((x: any) => x.function.name),
    ['get_weather'],
    'client tools still go',
  );
  t.equal(mixed.tool_choice, 'required', 'any → required');
  // The same request to an Anthropic upstream keeps its server tool.
  const an = JSON.parse(textOf(await client.messages.create({ ...params, model: 'an-model' })));
  t.same(an.tools, params.tools);
  // A model whose catalogue entry does not price web search takes the tool out, naming it.
  const served = await client.messages.create({ ...params, model: 'fallback-model' }).withResponse();
  t.equal(served.response.headers.get('x-airouter-dropped-tools'), 'web_search_20250305', 'named in the answer');
  t.notOk('tools' in JSON.parse(textOf(served.data)), 'and not sent');
  // Unless the request insists on it.
  const refused = await client.messages
    .create({ ...params, model: 'fallback-model', tool_choice: { type: 'tool', name: 'web_search' } } as any)
    .then(
      () => null,
      (e: unknown) => e,
    );
  t.type(refused, Anthropic.BadRequestError);
  const error = (refused as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { message: string } };
  t.match(
    error.error.message,
    /^tool_choice: The server tool "web_search" costs more than plain tokens and is not offered on "fallback-model"/,
  );
});
