// The Responses dialect on its own: the requests Codex and the SDKs send → IR; the recorded
// streams and answers in test/fixtures/openai-responses → IR; IR → the surface's events, in
// the vendor's order, ending as the whole answer would.

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { from, lastValueFrom, toArray } from 'rxjs';
import { responses as dialect } from '../../src/dialects/responses/index.js';
import { FREEFORM_PARAMETERS } from '../../src/dialects/responses/request.js';
import type { RenderContext } from '../../src/dialects/dialect.js';
import type { IRStreamEvent, IRTool } from '../../src/dialects/ir.js';
import { GatewayError } from '../../src/errors.js';
import { parseSSE } from '../helpers/sse.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

const fixtures = path.join(FIXTURES_DIR, 'openai-responses');
const read = (rel: string) => readFileSync(path.join(fixtures, rel));

async function decode(bytes: Buffer, chunk = 11): Promise<IRStreamEvent[]> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return lastValueFrom(from(chunks).pipe(parseSSE(), dialect.decodeStream(), toArray()));
}

function events(bytes: Buffer): { event?: string; data: any }[] {
  return bytes
    .toString('utf8')
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      return { event, data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) };
    });
}

t.test('a Codex-shaped request → IR', async (t) => {
  const ir = dialect.parseRequest({
    model: 'gpt-5-codex',
    instructions: 'You are Codex.',
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions>' }] },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'fix the bug' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
        ],
      },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
      { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done!' },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'mid-conversation note' }] },
    ],
    tools: [
      {
        type: 'function',
        name: 'shell',
        description: 'Runs a command',
        parameters: { type: 'object', properties: { command: { type: 'array' } } },
        strict: false,
      },
      {
        type: 'custom',
        name: 'apply_patch',
        description: 'Edits files',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: x' },
      },
      { type: 'namespace', name: 'mcp', tools: [{ type: 'function', name: 'search', parameters: { type: 'object' } }] },
      { type: 'web_search' },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'xhigh', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    max_output_tokens: 900,
    prompt_cache_key: 'abc',
  });
  t.same(
    ir.system,
    ['You are Codex.', '<permissions>'],
    'instructions and the leading developer message are the system prompt',
  );
  t.equal(ir.stream, true);
  t.equal(ir.maxTokens, 900);
  t.equal(ir.reasoningEffort, 'high', 'xhigh has no IR level above high');
  t.equal(ir.parallelToolCalls, false);
  t.same(
    ir.messages.map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant', 'user', 'system'],
  );
  t.same(ir.messages[0]!.content[1], {
    type: 'image',
    source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' },
  });
  t.same(
    ir.messages[1]!.content,
    [{ type: 'tool_use', id: 'call_1', name: 'shell', input: { command: ['ls'] } }],
    'the reasoning item is dropped, the call kept',
  );
  t.same(ir.messages[2]!.content, [{ type: 'tool_result', toolUseId: 'call_1', content: 'a.txt' }]);
  t.same(
    ir.messages[3]!.content,
    [{ type: 'tool_use', id: 'call_2', name: 'apply_patch', input: { input: '*** Begin Patch' } }],
    'a freeform call carries its text as {input}',
  );
  const tools = ir.tools as IRTool[];
  t.same(
    tools.map((x) => x.name),
    ['shell', 'apply_patch', 'mcp__search'],
    'hosted web_search is not a client tool; the namespace is flattened',
  );
  t.equal(tools[1]!.freeform, true);
  t.same(tools[1]!.parameters, FREEFORM_PARAMETERS);
  t.match(tools[1]!.description, /Edits files[\s\S]*start: x/, 'the grammar is told to models without freeform tools');
  t.equal(tools[2]!.namespace, 'mcp');
});

t.test('tools declared in an additional_tools input item (Codex on models it knows) count as tools', async (t) => {
  const ir = dialect.parseRequest({
    model: 'm',
    input: [
      {
        type: 'additional_tools',
        tools: [
          { type: 'custom', name: 'exec', description: 'Runs code' },
          { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] },
        ],
      },
      { role: 'user', content: 'hi' },
    ],
    tools: [{ type: 'function', name: 'g', parameters: { type: 'object' } }],
  });
  t.same(
    ir.tools?.map((x) => [x.name, x.freeform === true]),
    [
      ['g', false],
      ['exec', true],
      ['ns__f', false],
    ],
  );
  t.same(ir.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], 'and the item is no message');
});

t.test('a string input, and bad items named by their param', async (t) => {
  const ir = dialect.parseRequest({ model: 'm', input: 'hello' });
  t.same(ir.messages, [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
  for (const [body, param] of [
    [{ input: 'x' }, 'model'],
    [{ model: 'm', input: 5 }, 'input'],
    [{ model: 'm', input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id'],
    [{ model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ model: 'm', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
  ] as const) {
    const err = t.throws(() => dialect.parseRequest(body)) as unknown;
    t.ok(
      err instanceof GatewayError && err.kind === 'invalid_request' && err.param === param,
      `${JSON.stringify(body)} → 400 on ${param}`,
    );
  }
});

t.test('IR → an upstream Responses body', async (t) => {
  const ir = dialect.parseRequest({
    model: 'x',
    instructions: 'be brief',
    input: [
      { role: 'user', content: 'hi' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ],
    tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
    max_output_tokens: 50,
  });
  const body = dialect.buildRequest(ir, 'gpt-5');
  t.equal(body.model, 'gpt-5');
  t.equal(body.instructions, 'be brief');
  t.equal(body.max_output_tokens, 50);
  t.equal(body.store, false, 'the gateway keeps the state, not the vendor');
  t.same(body.input, [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
    { type: 'function_call_output', call_id: 'c1', output: 'ok' },
  ]);
});

t.test('every recorded stream decodes to a well-formed IR sequence', async (t) => {
  for (const file of readdirSync(fixtures).filter((f) => f.endsWith('.sse'))) {
    const evs = await decode(read(file));
    const last = evs.at(-1)!;
    t.ok(last.type === 'end' || last.type === 'error', `${file}: ends with end or error (${last.type})`);
    const opened = new Set<number>();
    for (const e of evs) {
      if (e.type === 'block_start') opened.add(e.index);
      if (e.type === 'block_stop')
        t.ok(opened.delete(e.index), `${file}: block ${e.index} closed once, after it opened`);
    }
    if (last.type === 'end') t.equal(opened.size, 0, `${file}: every block closed`);
  }
});

t.test('recorded streams: text and usage, parallel calls, a freeform call, reasoning, cut short, failed', async (t) => {
  const text = await decode(read('stream_text.sse'));
  t.same(
    text
      .filter((e) => e.type === 'delta')
      .map((e) => (e as any).delta.text)
      .join(''),
    'pong',
  );
  t.same((text.find((e) => e.type === 'stop') as any).usage, { input: 15, output: 2, cacheRead: 0, cacheWrite: 0 });

  const calls = await decode(read('stream_function_calls_parallel.sse'));
  const starts = calls.filter((e) => e.type === 'block_start').map((e) => (e as any).block);
  t.same(
    starts.map((b) => [b.type, b.id, b.name]),
    [
      ['tool_use', 'call_REDACTED_1', 'lookup_harbor_label'],
      ['tool_use', 'call_REDACTED_2', 'lookup_orchard_label'],
    ],
  );
  t.equal((calls.find((e) => e.type === 'stop') as any).stopReason, 'tool_use');

  const custom = await decode(read('stream_custom_tool_call.sse'));
  const json = custom
    .filter((e) => e.type === 'delta' && (e as any).delta.type === 'input_json')
    .map((e) => (e as any).delta.partialJson)
    .join('');
  t.type(JSON.parse(json).input, 'string', 'the freeform text arrives whole, as {input}');
  t.ok(JSON.parse(json).input.length > 20);

  const reasoning = await decode(read('stream_reasoning_summary_then_text.sse'));
  t.ok(
    reasoning.some((e) => e.type === 'delta' && (e as any).delta.type === 'thinking'),
    'the summary is thinking',
  );
  t.ok(
    reasoning.some((e) => e.type === 'delta' && (e as any).delta.type === 'text'),
    'then text',
  );

  const cut = await decode(read('stream_incomplete_max_output_tokens.sse'));
  t.equal((cut.find((e) => e.type === 'stop') as any).stopReason, 'max_tokens');

  const failed = await decode(read('stream_error_then_failed.sse'));
  t.equal(failed.at(-1)!.type, 'error');

  const truncated = read('stream_text.sse').toString().split('event: response.completed')[0]!;
  t.equal(
    (await decode(Buffer.from(truncated))).at(-1)!.type,
    'error',
    'a stream closed before its terminal event failed',
  );
});

t.test('recorded whole answers → IR', async (t) => {
  const phase = dialect.parseResponse(JSON.parse(read('response_phase_usage_cached_reasoning.json').toString()));
  t.same(
    phase.usage,
    { input: 7243 - 3072, output: 423, cacheRead: 3072, cacheWrite: 0 },
    'input_tokens includes the cached ones',
  );
  const incomplete = dialect.parseResponse(JSON.parse(read('response_incomplete_max_output_tokens.json').toString()));
  t.equal(incomplete.stopReason, 'max_tokens');
  const text = dialect.parseResponse(JSON.parse(read('response_text.json').toString()));
  t.match(text.content[0], { type: 'text', text: /San Francisco/ });
});

const tools = new Map<string, IRTool>([
  ['apply_patch', { name: 'apply_patch', parameters: FREEFORM_PARAMETERS, freeform: true }],
  ['mcp__search', { name: 'mcp__search', parameters: {}, namespace: 'mcp' }],
]);

t.test("IR → the surface's stream: the vendor's order, sequence numbers, usage at the end only", async (t) => {
  let final: Record<string, unknown> | undefined;
  const ctx: RenderContext = {
    id: 'resp_gw1',
    model: 'claude-x',
    created: 1_700_000_000,
    includeUsage: true,
    clientTools: tools,
    echo: { store: false, instructions: 'hi' },
    onFinal: (r) => (final = r),
  };
  const ir: IRStreamEvent[] = [
    { type: 'start', id: 'msg_up', model: 'up', usage: { input: 10, cacheRead: 5 } },
    { type: 'block_start', index: 0, block: { type: 'thinking' } },
    { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'hmm' } },
    { type: 'delta', index: 0, delta: { type: 'signature', signature: 'sig' } },
    { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'text' } },
    { type: 'delta', index: 1, delta: { type: 'text', text: 'Hel' } },
    { type: 'delta', index: 1, delta: { type: 'text', text: 'lo' } },
    { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { type: 'tool_use', id: 'toolu_1', name: 'apply_patch' } },
    { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '{"input":"*** Begin' } },
    { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: ' Patch"}' } },
    { type: 'block_stop', index: 2 },
    { type: 'block_start', index: 3, block: { type: 'tool_use', id: 'toolu_2', name: 'mcp__search' } },
    { type: 'delta', index: 3, delta: { type: 'input_json', partialJson: '{"q":"x"}' } },
    { type: 'block_stop', index: 3 },
    { type: 'stop', stopReason: 'tool_use', usage: { output: 7 } },
    { type: 'end' },
  ];
  const out = Buffer.concat(await lastValueFrom(from(ir).pipe(dialect.encodeStream(ctx), toArray())));
  const evs = events(out);
  t.ok(
    evs.every((e, i) => e.event === e.data.type && e.data.sequence_number === i),
    'event line = type; sequence numbers count up',
  );
  t.same(
    evs.map((e) => e.event),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  t.ok(
    evs.slice(0, -1).every((e) => e.data.response === undefined || e.data.response.usage === null),
    'no usage before the end',
  );
  const done = evs.at(-1)!.data.response;
  t.same(done.usage, {
    input_tokens: 15,
    input_tokens_details: { cached_tokens: 5 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 22,
  });
  t.same(
    done.output.map((i: any) => i.type),
    ['reasoning', 'message', 'custom_tool_call', 'function_call'],
  );
  t.same(done.output[2], {
    id: done.output[2].id,
    type: 'custom_tool_call',
    status: 'completed',
    call_id: 'toolu_1',
    name: 'apply_patch',
    input: '*** Begin Patch',
  });
  t.same(done.output[3], {
    id: done.output[3].id,
    type: 'function_call',
    status: 'completed',
    call_id: 'toolu_2',
    name: 'search',
    arguments: '{"q":"x"}',
    namespace: 'mcp',
  });
  t.equal(done.store, false, 'request fields are echoed');
  t.equal(done.instructions, 'hi');
  t.same(final, done, 'the whole answer is handed on once complete');
});

t.test('IR → a whole response; an error mid-stream is error then response.failed', async (t) => {
  const ctx: RenderContext = { id: 'resp_gw2', model: 'm', created: 1, includeUsage: true };
  const body = dialect.renderResponse(
    {
      id: 'x',
      model: 'up',
      content: [{ type: 'text', text: 'hi' }],
      stopReason: 'max_tokens',
      usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0 },
    },
    ctx,
  ) as any;
  t.equal(body.status, 'incomplete');
  t.same(body.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(body.output[0].content[0].text, 'hi');
  const failing: IRStreamEvent[] = [
    { type: 'start', id: 'a', model: 'b' },
    { type: 'error', kind: 'upstream', message: 'boom' },
  ];
  const evs = events(Buffer.concat(await lastValueFrom(from(failing).pipe(dialect.encodeStream(ctx), toArray()))));
  t.same(
    evs.map((e) => e.event),
    ['response.created', 'response.in_progress', 'error', 'response.failed'],
  );
  t.equal(evs[3]!.data.response.error.message, 'boom');
});
