// The Gemini dialect on its own: the recorded answers and streams in test/fixtures/gemini → IR
// (usage as billed: prompt less cache, thoughts as output), a client's body → IR (ids matched by
// name and order, schemas made JSON Schema, both spellings of the fields), IR → a body for a
// Gemini upstream, and IR → the surface's chunks (SSE and the JSON array), read back by the
// decoder as the same answer.

import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { from, lastValueFrom, toArray } from 'rxjs';
import { gemini as dialect } from '../../src/dialects/gemini/index.js';
import { SKIP_SIGNATURE } from '../../src/dialects/gemini/build.js';
import { ARRAY_TYPE } from '../../src/dialects/gemini/framing.js';
import type { RenderContext, SurfaceCall } from '../../src/dialects/dialect.js';
import type { IRContent, IRStreamEvent } from '../../src/dialects/ir.js';
import { GatewayError } from '../../src/errors.js';
import { isFinal } from '../../src/stream/sse.js';
import { parseSSE } from '../helpers/sse.js';
import { FIXTURES_DIR } from '../fixtures/index.js';

const read = (rel: string) => readFileSync(path.join(FIXTURES_DIR, 'gemini', rel));
const json = (rel: string) => JSON.parse(read(rel).toString('utf8'));

async function decode(bytes: Buffer, chunk = 13): Promise<IRStreamEvent[]> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  return lastValueFrom(from(chunks).pipe(parseSSE(), dialect.decodeStream(), toArray()));
}

/** The blocks a decoded stream builds, as the whole answer would hold them. */
function blocks(events: IRStreamEvent[]): IRContent[] {
  const out: IRContent[] = [];
  const json: Record<number, string> = {};
  for (const e of events) {
    if (e.type === 'block_start') {
      const b = e.block;
      out[e.index] =
        b.type === 'tool_use'
          ? { type: 'tool_use', id: b.id, name: b.name, input: {}, ...(b.signature ? { signature: b.signature } : {}) }
          : b.type === 'text'
            ? { type: 'text', text: '' }
            : { type: 'thinking', thinking: '' };
    } else if (e.type === 'delta') {
      const b = out[e.index]!;
      if (e.delta.type === 'text' && b.type === 'text') b.text += e.delta.text;
      if (e.delta.type === 'thinking' && b.type === 'thinking') b.thinking += e.delta.thinking;
      if (e.delta.type === 'signature' && b.type === 'thinking') b.signature = e.delta.signature;
      if (e.delta.type === 'input_json') json[e.index] = (json[e.index] ?? '') + e.delta.partialJson;
    } else if (e.type === 'block_stop' && out[e.index]?.type === 'tool_use')
      (out[e.index] as { input: unknown }).input = JSON.parse(json[e.index] ?? '{}');
  }
  return out;
}
const stopOf = (events: IRStreamEvent[]) =>
  events.find((e): e is Extract<IRStreamEvent, { type: 'stop' }> => e.type === 'stop');

t.test('recorded whole answers → IR', async (t) => {
  const text = dialect.parseResponse(json('generate_text.json'));
  t.match(
    text.content,
    [{ type: 'text', text: /3\*\* r's/ }],
    'the text; its signature (Gemini 3, on the text part) dropped',
  );
  t.equal(text.content.length, 1);
  t.same(text.usage, { input: 9, output: 28 + 244, cacheRead: 0, cacheWrite: 0 }, 'thoughts billed as output');
  t.equal(text.stopReason, 'end_turn');
  t.equal(text.model, 'gemini-3-pro-preview');

  const call = dialect.parseResponse(json('generate_function_call.json'));
  t.match(
    call.content,
    [{ type: 'tool_use', name: 'weather', input: { location: 'San Francisco' }, signature: /^EskgCsYg/ }],
    'the call, its signature kept on it',
  );
  t.match((call.content[0] as { id: string }).id, /^call_/, 'an id made for a call without one');
  t.equal(call.stopReason, 'tool_use', 'STOP after a function call is tool_use');
  t.same(call.usage, { input: 29, output: 15 + 893, cacheRead: 0, cacheWrite: 0 });

  const cached = dialect.parseResponse(json('generate_cached_content.json'));
  t.same(
    cached.usage,
    { input: 5787 - 5770, output: 3, cacheRead: 5770, cacheWrite: 0 },
    'promptTokenCount includes the cached tokens',
  );

  const thoughts = dialect.parseResponse(json('generate_thought_parts.json'));
  t.same(
    thoughts.content.map((c) => c.type),
    ['thinking', 'text'],
    'thought parts are thinking, not text',
  );

  const cut = dialect.parseResponse(json('generate_thought_max_tokens_v1alpha.json'));
  t.equal(cut.stopReason, 'max_tokens');
  t.same(
    cut.usage,
    { input: 17, output: 19, cacheRead: 0, cacheWrite: 0 },
    'no candidatesTokenCount: the thoughts alone',
  );
  t.throws(() => dialect.parseResponse('nope'), GatewayError);
});

t.test('recorded streams → IR', async (t) => {
  const plain = await decode(read('stream_text_gemini20.sse'));
  t.match(plain[0], { type: 'start', id: 'pdSfaOurIPqAm9IPucqbqA4', model: 'gemini-2.0-flash' });
  t.match(blocks(plain), [{ type: 'text', text: /^The sky is blue due to/ }]);
  t.same(
    stopOf(plain)?.usage,
    { input: 6, output: 377, cacheRead: 0, cacheWrite: 0 },
    "the last chunk's counts (7 → 6 prompt tokens)",
  );
  t.equal(plain.at(-1)?.type, 'end');

  const thinking = await decode(read('stream_text_thinking_usage.sse'));
  t.same(
    blocks(thinking).map((b) => b.type),
    ['text'],
    'the empty signed part at the end adds no block',
  );
  t.same(stopOf(thinking)?.usage, { input: 19, output: 54 + 214, cacheRead: 0, cacheWrite: 0 });

  const empty = await decode(read('stream_text_empty_signature_part.sse'));
  t.match(blocks(empty), [{ type: 'text', text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y' }]);

  const thought = await decode(read('stream_thought_parts.sse'));
  t.match(
    blocks(thought),
    [
      { type: 'thinking', thinking: /Calculating Time Units[\s\S]*Determining Total Minutes/ },
      { type: 'text', text: '5040' },
    ],
    'thoughts one thinking block, then the answer',
  );
  t.equal(stopOf(thought)?.stopReason, 'end_turn');

  const call = await decode(read('stream_function_call.sse'));
  t.match(blocks(call), [
    { type: 'tool_use', name: 'lookup_harbor_label', input: {}, signature: 'signature_REDACTED_1' },
  ]);
  t.equal(stopOf(call)?.stopReason, 'tool_use');

  const parallel = await decode(read('stream_parallel_function_calls.sse'));
  const calls = blocks(parallel) as Extract<IRContent, { type: 'tool_use' }>[];
  t.same(
    calls.map((c) => c.name),
    ['lookup_harbor_label', 'lookup_orchard_label'],
    'two calls from one chunk',
  );
  t.not(calls[0]!.id, calls[1]!.id, 'with ids of their own');

  const g3 = await decode(read('stream_thinking_then_function_call.sse'));
  t.match(
    blocks(g3),
    [{ type: 'thinking' }, { type: 'tool_use', id: 'call_966934', signature: 'signature_REDACTED_1' }],
    'Gemini 3 ids kept',
  );

  const max = await decode(read('stream_max_tokens.sse'));
  t.equal(stopOf(max)?.stopReason, 'max_tokens');
  t.same(stopOf(max)?.usage, { input: 12, output: 33, cacheRead: 0, cacheWrite: 0 });

  const cached = await decode(read('stream_cached_content.sse'));
  t.same(stopOf(cached)?.usage, { input: 6, output: 2, cacheRead: 1081, cacheWrite: 0 });

  const vertex = await decode(read('vertex_stream_partial_args_no_args_call.sse'));
  t.match(
    blocks(vertex).filter((b) => b.type === 'tool_use'),
    [
      { name: 'read_theme', input: {} },
      { name: 'read_screen', input: { id: 'A' } },
      { name: 'read_screen', input: { id: 'B' } },
      { name: 'read_screen', input: { id: 'C' } },
    ],
    'streamed arguments gathered',
  );

  const cut = await decode(read('stream_max_tokens.sse').subarray(0, 700));
  t.match(cut.at(-1), { type: 'error', kind: 'upstream' }, 'a stream closed before finishReason is a failure');
  const err = await decode(
    Buffer.from('data: {"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}\r\n\r\n'),
  );
  t.match(err.at(-1), { type: 'error', kind: 'rate_limit', message: 'Quota exceeded' });
  t.equal(
    dialect.upstreamErrorMessage(json('errors/404_stream_debuginfo.json')),
    json('errors/404_stream_debuginfo.json').error.message,
  );
});

const call = (model: string, stream = false): SurfaceCall => ({ method: 'generate', model, stream, query: '' });

t.test('a client body → IR', async (t) => {
  const ir = dialect.parseRequest(
    {
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'weather?' },
            { inline_data: { mime_type: 'image/png', data: 'AAAA' } },
            { inlineData: { mimeType: 'audio/wav', data: 'BBBB' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Hmm', thought: true },
            { text: ' more', thought: true, thoughtSignature: 'sig-t' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { output: 'sunny' } } },
            { functionResponse: { name: 'get_weather', id: 'client-own', response: { error: 'down' } } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              parameters: {
                type: 'OBJECT',
                properties: {
                  city: { type: 'STRING', nullable: true },
                  days: { type: 'ARRAY', items: { type: 'INTEGER' }, minItems: '1' },
                },
                required: ['city'],
              },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generation_config: {
        max_output_tokens: 300,
        temperature: 0.5,
        topK: 40,
        stop_sequences: ['END'],
        thinking_config: { thinking_budget: 2048 },
      },
    },
    call('gm-model', true),
  );
  t.equal(ir.model, 'gm-model', 'the model from the URL');
  t.equal(ir.stream, true);
  t.same(ir.system, ['Be brief.']);
  t.match(ir.messages[0]!.content, [
    { type: 'text', text: 'weather?' },
    { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
  ]);
  t.equal(ir.messages[0]!.content.length, 2, 'audio has no IR counterpart');
  const [thinking, first, second] = ir.messages[1]!.content as any[];
  t.same(
    thinking,
    { type: 'thinking', thinking: 'Hmm more', signature: 'sig-t' },
    "a thought's pieces joined, its signature kept",
  );
  t.match(first, { type: 'tool_use', name: 'get_weather', input: { city: 'Paris' }, signature: 'sig-1' });
  const results = ir.messages[2]!.content as any[];
  t.same(
    results.map((r) => r.toolUseId),
    [first.id, second.id],
    "responses matched to calls by name and order (the client's own id unknown)",
  );
  t.same(
    results.map((r) => [r.content, r.isError]),
    [
      ['sunny', undefined],
      ['down', true],
    ],
  );
  t.same(
    ir.tools![0]!.parameters,
    {
      type: 'object',
      properties: {
        city: { type: ['string', 'null'] },
        days: { type: 'array', items: { type: 'integer' }, minItems: 1 },
      },
      required: ['city'],
    },
    'OpenAPI subset → JSON Schema',
  );
  t.same(ir.toolChoice, { type: 'tool', name: 'get_weather' });
  t.match(ir, { maxTokens: 300, temperature: 0.5, stop: ['END'], thinking: { budgetTokens: 2048 } });

  t.match(
    dialect.parseRequest(
      { contents: [{ parts: [{ text: 'x' }] }], generationConfig: { thinkingConfig: { thinkingLevel: 'HIGH' } } },
      call('m'),
    ),
    { reasoningEffort: 'high' },
  );
  t.match(dialect.parseRequest({ contents: [], cachedContent: 'cachedContents/abc' }, call('m')), {
    sameDialectOnly: { param: 'cachedContent' },
  });
  t.match(
    dialect.parseRequest(
      { generateContentRequest: { model: 'models/m', contents: [{ parts: [{ text: 'count me' }] }] } },
      { ...call('m'), method: 'count_tokens' },
    ).messages,
    [{ content: [{ text: 'count me' }] }],
    'countTokens may wrap a whole request',
  );
  const refused = (body: unknown) => {
    try {
      dialect.parseRequest(body, call('m'));
    } catch (err) {
      return err instanceof GatewayError ? `${err.kind} ${err.param}` : String(err);
    }
    return 'accepted';
  };
  t.equal(refused({ contents: 'hi' }), 'invalid_request contents');
  t.equal(refused({ contents: [{ role: 'assistant', parts: [] }] }), 'invalid_request contents[0].role');
  t.equal(
    refused({ contents: [], generationConfig: { maxOutputTokens: 0 } }),
    'invalid_request generationConfig.maxOutputTokens',
  );
});

t.test('IR → a body for a Gemini upstream', async (t) => {
  const body = dialect.buildRequest(
    {
      model: 'x',
      system: ['sys'],
      stream: true,
      includeUsage: true,
      maxTokens: 100,
      thinking: { budgetTokens: 5000 },
      stop: ['a', 'b', 'c', 'd', 'e', 'f'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'other vendor' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
            { type: 'tool_use', id: 'toolu_2', name: 'g', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'toolu_1', content: 'one' },
            { type: 'tool_result', toolUseId: 'toolu_2', content: 'bad', isError: true },
          ],
        },
      ],
      tools: [{ name: 'f', parameters: { type: 'object' } }],
      toolChoice: { type: 'required' },
    },
    'upstream',
  ) as any;
  t.same(body.systemInstruction, { parts: [{ text: 'sys' }] });
  t.same(
    body.contents[1].parts,
    [
      { functionCall: { id: 'toolu_1', name: 'f', args: { a: 1 } }, thoughtSignature: SKIP_SIGNATURE },
      { functionCall: { id: 'toolu_2', name: 'g', args: {} } },
    ],
    'unsigned thoughts dropped; the first call of the turn carries the documented skip value',
  );
  t.same(body.contents[2].parts, [
    { functionResponse: { id: 'toolu_1', name: 'f', response: { output: 'one' } } },
    { functionResponse: { id: 'toolu_2', name: 'g', response: { error: 'bad' } } },
  ]);
  t.same(body.tools, [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] }]);
  t.same(body.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  t.same(
    body.generationConfig,
    {
      maxOutputTokens: 100,
      stopSequences: ['a', 'b', 'c', 'd', 'e'],
      thinkingConfig: { thinkingBudget: 99, includeThoughts: true },
    },
    'the budget inside the cap',
  );
  t.equal(body.model, undefined, 'the model goes in the URL');
  t.equal(
    dialect.upstream.endpoint('https://g/v1beta', { model: 'gemini-2.5-flash', stream: true }),
    'https://g/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
  );
  t.equal(
    dialect.upstream.endpoint('https://g/v1beta', { model: 'tunedModels/t1', stream: false }),
    'https://g/v1beta/tunedModels/t1:generateContent',
  );
  const forwarded: Record<string, unknown> = {
    model: 'm',
    contents: [],
    generation_config: { max_output_tokens: 5000, temperature: 1 },
  };
  dialect.upstream.setOutputCap(forwarded, 700, { host: 'g' }, 'm');
  dialect.upstream.prepareForward!(forwarded, {} as never);
  t.same(
    forwarded,
    { contents: [], generation_config: { temperature: 1, maxOutputTokens: 700 } },
    "the cap in the client's own spelling of the config; no model",
  );
});

function ctx(stream?: 'array'): RenderContext {
  return {
    model: 'gm-model',
    id: 'resp1',
    created: 0,
    includeUsage: true,
    call: {
      method: 'generate',
      model: 'gm-model',
      stream: true,
      query: '',
      ...(stream ? { streamType: ARRAY_TYPE } : {}),
    },
  };
}

const ANSWER: IRStreamEvent[] = [
  { type: 'start', id: 'u1', model: 'up', usage: { input: 10, cacheRead: 4 } },
  { type: 'block_start', index: 0, block: { type: 'thinking' } },
  { type: 'delta', index: 0, delta: { type: 'thinking', thinking: 'let me see' } },
  { type: 'delta', index: 0, delta: { type: 'signature', signature: 'sig' } },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { type: 'text' } },
  { type: 'delta', index: 1, delta: { type: 'text', text: 'Hello' } },
  { type: 'delta', index: 1, delta: { type: 'text', text: ' there' } },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { type: 'tool_use', id: 'toolu_9', name: 'f' } },
  { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '{"a":' } },
  { type: 'delta', index: 2, delta: { type: 'input_json', partialJson: '1}' } },
  { type: 'block_stop', index: 2 },
  { type: 'stop', stopReason: 'tool_use', usage: { input: 10, output: 20, cacheRead: 4 } },
  { type: 'end' },
];

t.test("IR → the surface's stream, and back", async (t) => {
  const out = await lastValueFrom(from(ANSWER).pipe(dialect.encodeStream(ctx()), toArray()));
  const text = Buffer.concat(out).toString('utf8');
  t.ok(
    text
      .split('\r\n\r\n')
      .filter((x) => x !== '')
      .every((e) => e.startsWith('data: {')),
    'CRLF-framed data events, no [DONE]',
  );
  t.ok(
    isFinal(out.at(-1)!) && out.slice(0, -1).every((b) => !isFinal(b)),
    'the last chunk, and only it, is held for the settle',
  );
  const chunks = text
    .split('\r\n\r\n')
    .filter((x) => x !== '')
    .map((e) => JSON.parse(e.slice(6)));
  t.match(chunks.at(-1), {
    candidates: [{ finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 14, candidatesTokenCount: 20, cachedContentTokenCount: 4, totalTokenCount: 34 },
    modelVersion: 'gm-model',
    responseId: 'resp1',
  });
  t.ok(
    chunks.slice(0, -1).every((c) => c.usageMetadata?.promptTokenCount === 14),
    'the counts so far in every chunk',
  );
  t.match(
    chunks.find((c) => c.candidates[0].content.parts?.[0]?.functionCall),
    { candidates: [{ content: { parts: [{ functionCall: { id: 'toolu_9', name: 'f', args: { a: 1 } } }] } }] },
    'a call whole',
  );
  const back = await decode(Buffer.from(text));
  t.match(
    blocks(back),
    [
      { type: 'thinking', thinking: 'let me see', signature: 'sig' },
      { type: 'text', text: 'Hello there' },
      { type: 'tool_use', id: 'toolu_9', name: 'f', input: { a: 1 } },
    ],
    'decoded back to the same answer',
  );
  t.same(stopOf(back)?.usage, { input: 10, output: 20, cacheRead: 4, cacheWrite: 0 });

  const arrayOut = await lastValueFrom(from(ANSWER).pipe(dialect.encodeStream(ctx('array')), toArray()));
  const array = JSON.parse(Buffer.concat(arrayOut).toString('utf8'));
  t.equal(array.length, chunks.length, 'without alt=sse: one JSON array of the same chunks');
  t.ok(
    isFinal(arrayOut.at(-1)!) && Buffer.from(arrayOut.at(-1)!).toString().endsWith(']'),
    'its closing bracket held with the last chunk',
  );

  const failing: IRStreamEvent[] = [...ANSWER.slice(0, 7), { type: 'error', kind: 'overloaded', message: 'busy' }];
  const failed = JSON.parse(
    Buffer.concat(await lastValueFrom(from(failing).pipe(dialect.encodeStream(ctx('array')), toArray()))).toString(),
  );
  t.match(
    failed.at(-1),
    { error: { code: 503, status: 'UNAVAILABLE', message: 'busy' } },
    'an error ends the array as its last element',
  );
  const c = ctx('array');
  t.same(
    JSON.parse(dialect.errorEvent(new GatewayError('upstream', 'gone'), 'r', c).toString()),
    [{ error: { code: 502, message: 'gone', status: 'INTERNAL' } }],
    'an error before any chunk is a whole array',
  );
});

t.test("IR answer → the surface's whole body; errors", async (t) => {
  const body = dialect.renderResponse(
    {
      id: 'x',
      model: 'up',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'tool_use', id: 'c1', name: 'f', input: {}, signature: 's' },
      ],
      stopReason: 'max_tokens',
      usage: { input: 5, output: 7, cacheRead: 2, cacheWrite: 0 },
    },
    ctx(),
  ) as any;
  t.same(body.candidates, [
    {
      content: {
        parts: [{ text: 'hi' }, { functionCall: { id: 'c1', name: 'f', args: {} }, thoughtSignature: 's' }],
        role: 'model',
      },
      finishReason: 'MAX_TOKENS',
      index: 0,
    },
  ]);
  t.same(body.usageMetadata, {
    promptTokenCount: 7,
    candidatesTokenCount: 7,
    cachedContentTokenCount: 2,
    totalTokenCount: 14,
  });
  t.equal(body.modelVersion, 'gm-model');
  const statuses = (
    [
      'invalid_request',
      'authentication',
      'insufficient_balance',
      'permission',
      'not_found',
      'too_large',
      'rate_limit',
      'upstream',
      'overloaded',
      'timeout',
      'unavailable',
    ] as const
  ).map((k) => {
    const { status, body } = dialect.errorResponse(new GatewayError(k, 'm'), 'r') as { status: number; body: any };
    return `${status} ${body.error.status}`;
  });
  t.same(statuses, [
    '400 INVALID_ARGUMENT',
    '401 UNAUTHENTICATED',
    '402 RESOURCE_EXHAUSTED',
    '403 PERMISSION_DENIED',
    '404 NOT_FOUND',
    '413 INVALID_ARGUMENT',
    '429 RESOURCE_EXHAUSTED',
    '502 INTERNAL',
    '503 UNAVAILABLE',
    '504 DEADLINE_EXCEEDED',
    '503 UNAVAILABLE',
  ]);
  const coded = dialect.errorResponse(
    new GatewayError('insufficient_balance', 'top up', { code: 'insufficient_balance' }),
    'r',
  ).body as any;
  t.match(
    coded.error.details,
    [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'insufficient_balance' }],
    "the gateway's code as an ErrorInfo reason",
  );
});

t.test('where a body carries images', async (t) => {
  const inline = { mimeType: 'image/jpeg', data: 'x'.repeat(1000) };
  const file = { mimeType: 'image/png', fileUri: 'https://x/y.png' };
  const parts = dialect.promptParts({
    contents: [
      {
        parts: [
          { text: 'a' },
          { inlineData: inline },
          { fileData: file },
          { inlineData: { mimeType: 'application/pdf', data: 'zz' } },
        ],
      },
    ],
  });
  t.same(
    parts.images,
    [
      { holder: inline, key: 'data' },
      { holder: file, key: '' },
    ],
    'images only, inline or linked',
  );
});

t.test('pass-through: modelVersion renamed in place, usage and the final chunk read', async (t) => {
  const noted: unknown[] = [];
  const texts: string[] = [];
  const sink = {
    failed: false,
    noteUsage: (u: unknown) => noted.push(u),
    noteRaw: () => {},
    noteText: (s: string) => texts.push(s),
  };
  const tap = dialect.upstream.passThroughTap(sink, {} as never, ctx());
  const ev = (data: string) => ({ data, raw: Buffer.from(`data: ${data}\r\n\r\n`), dataStart: -1 });
  const odd = JSON.stringify({
    candidates: [{ content: { parts: [{ text: 'a' }], role: 'model' } }],
    usageMetadata: { promptTokenCount: 5 },
    modelVersion: 'we"ird\\"name',
    responseId: 'r',
  });
  const first = tap.event(ev(odd))!;
  t.same(
    JSON.parse(first.toString().slice(6)),
    { ...JSON.parse(odd), modelVersion: 'gm-model' },
    "still JSON, naming the catalogue's model",
  );
  t.notOk(isFinal(first));
  const plain = JSON.stringify({
    candidates: [{ content: { parts: [{ text: 'b' }], role: 'model' }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 3 },
    modelVersion: 'gm-model',
  });
  const last = tap.event(ev(plain))!;
  t.ok(isFinal(last), 'the chunk with finishReason is the final one');
  t.same(
    noted,
    [
      { input: 5, cacheRead: 0 },
      { input: 5, output: 5, cacheRead: 0, cacheWrite: 0 },
    ],
    'the prompt alone until output is counted; thoughts as output',
  );
  t.same(texts, ['a', 'b'], 'text noted for the fallback count');
  t.equal(last.toString(), `data: ${plain}\r\n\r\n`, 'a chunk naming the model already passes byte for byte');
});
