// What a wire dialect must provide, checked on every registered one, and the lists derived from
// the registry (names, embedding dialects, reasoning-model patterns, surface names) checked
// against it. The type system holds the shapes; this holds what a shape cannot say: that the
// halves of one dialect read what the other half writes, that every dialect has its folder under
// its one name, and that the public names (the catalogue's `dialect`, the usage record's
// `surface`, the routes) stay what users' files, stored rows and the API docs say.

import t from 'tap';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import { REASONING_MODEL } from '../../src/catalogue/index.js';
import type { Dialect, DialectLimits, RenderContext } from '../../src/dialects/dialect.js';
import { EMBEDDINGS, embeddingsUpstream } from '../../src/dialects/embeddings.js';
import { DIALECT_NAMES, DIALECTS, EMBEDDINGS_SURFACE, SURFACE_NAMES } from '../../src/dialects/index.js';
import type { IRRequest, IRResponse, IRStreamEvent } from '../../src/dialects/ir.js';
import { DIALECT_METAS, EMBEDDING_DIALECT_NAMES, REASONING_MODEL_PATTERNS } from '../../src/dialects/names.js';
import { parseEmbeddingsRequest } from '../../src/inference/embeddings.js';
import { GatewayError } from '../../src/errors.js';
import { parseSSE } from '../helpers/sse.js';

/** What every dialect provides (dialect.ts `Dialect`): functions, by the object that holds them. */
const REQUIRED = {
  /** The IR mapping both ways, and error mapping. */
  dialect: [
    'parseRequest',
    'renderResponse',
    'encodeStream',
    'errorResponse',
    'errorEvent',
    'buildRequest',
    'parseResponse',
    'decodeStream',
    'upstreamErrorMessage',
    'promptParts',
  ],
  /** How a provider of the dialect is called and read. */
  upstream: ['endpoint', 'headers', 'setOutputCap', 'passThroughWhole', 'passThroughTap'],
  upstreamOptional: ['countTokensEndpoint', 'refusedCredentials', 'prepareForward'],
  /** A dialect served to clients. */
  surface: ['key', 'newId', 'answerHeaders', 'clientTerms'],
  surfaceOptional: ['call', 'countAnswer', 'forwardHeaders'],
  /** A dialect whose providers serve POST /v1/embeddings. */
  embeddings: ['endpoint', 'headers', 'body', 'parse'],
} as const;

/**
 * The public names, one row per dialect: the catalogue's `dialect` (= registry key and folder),
 * the usage record's `surface` and the inference route. docs/architecture.md has this table.
 */
const PUBLIC = {
  openai: { surface: 'chat', path: '/v1/chat/completions' },
  anthropic: { surface: 'messages', path: '/v1/messages' },
  responses: { surface: 'responses', path: '/v1/responses' },
  gemini: { surface: 'gemini', path: '/v1beta/models/*' },
} as const;

/** A model name of each vendor's reasoning models, and one of its models that does not reason. */
const REASONING_SAMPLES: Record<string, { reasons: string[]; not: string[] }> = {
  openai: { reasons: ['o3-mini', 'gpt-5.1', 'openai/o4-mini'], not: ['gpt-4o', 'gpt-4.1-mini'] },
  anthropic: {
    reasons: ['claude-sonnet-4-20250514', 'claude-3-7-sonnet-latest', 'anthropic/claude-opus-4.1'],
    not: ['claude-3-5-haiku-latest'],
  },
  responses: { reasons: ['gpt-5-codex'], not: ['gpt-4o-mini'] },
  gemini: {
    reasons: ['gemini-2.5-pro', 'models/gemini-3-flash', 'google/gemini-2.5-flash'],
    not: ['gemini-2.0-flash'],
  },
};

const LIMITS: DialectLimits = { MAX_N: 8, ANTHROPIC_VERSIONS: ['2023-06-01'], ANTHROPIC_PRICED_BETAS: [] };
const BASE = 'https://upstream.example/v1';
const KEY = 'sk-registry-test';

const IR_REQUEST: IRRequest = {
  model: 'm',
  system: ['Be brief.'],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  stream: false,
  includeUsage: true,
};

const IR_ANSWER: IRResponse = {
  id: 'a1',
  model: 'm',
  content: [{ type: 'text', text: 'Hello there' }],
  stopReason: 'end_turn',
  usage: { input: 11, output: 7, cacheRead: 0, cacheWrite: 0 },
};

const IR_STREAM: IRStreamEvent[] = [
  { type: 'start', id: 'a1', model: 'm', usage: { input: 11 } },
  { type: 'block_start', index: 0, block: { type: 'text' } },
  { type: 'delta', index: 0, delta: { type: 'text', text: 'Hello' } },
  { type: 'delta', index: 0, delta: { type: 'text', text: ' there' } },
  { type: 'block_stop', index: 0 },
  { type: 'stop', stopReason: 'end_turn', usage: { input: 11, output: 7, cacheRead: 0, cacheWrite: 0 } },
  { type: 'end' },
];

const names = Object.keys(DIALECTS) as (keyof typeof DIALECTS)[];
const registered = names.map((name) => [name, DIALECTS[name] as Dialect] as const);

const ctx = (d: Dialect): RenderContext => ({
  model: 'm',
  id: d.surface?.newId() ?? 'a1',
  created: 1700000000,
  includeUsage: true,
});

/** Every path of a JSON value whose value is `value`. */
function pathsOf(json: unknown, value: unknown, at = ''): string[] {
  if (json === value) return [at];
  if (json === null || typeof json !== 'object') return [];
  return Object.entries(json).flatMap(([k, v]) => pathsOf(v, value, at ? `${at}.${k}` : k));
}

const textOf = (events: IRStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'delta' && e.delta.type === 'text' ? [e.delta.text] : [])).join('');

const DIALECTS_DIR = fileURLToPath(new URL('../../src/dialects/', import.meta.url));

for (const [name, dialect] of registered) {
  t.test(`${name}: what a dialect provides`, async (t) => {
    t.equal(dialect.name, name, "its name is its registry key (the catalogue's `dialect`)");
    t.ok(
      existsSync(`${DIALECTS_DIR}${name}/index.ts`) && existsSync(`${DIALECTS_DIR}${name}/meta.ts`),
      'its folder has its name, with index.ts and meta.ts',
    );
    const folder = (await import(`${DIALECTS_DIR}${name}/index.js`)) as Record<string, unknown>;
    t.equal(folder[name], dialect, 'its index.ts exports it under its name (what the registry loads)');
    const light = (await import(`${DIALECTS_DIR}${name}/meta.js`)) as { meta?: unknown };
    t.ok(
      DIALECT_METAS.some((m) => m === light.meta && m.name === name),
      'its meta.ts exports its light half, `meta`, listed in the registry (names.ts)',
    );
    for (const fn of REQUIRED.dialect) t.type(dialect[fn], 'function', fn);
    for (const fn of REQUIRED.upstream) t.type(dialect.upstream[fn], 'function', `upstream.${fn}`);
    for (const fn of REQUIRED.upstreamOptional)
      t.ok(dialect.upstream[fn] === undefined || typeof dialect.upstream[fn] === 'function', `upstream.${fn}, if any`);
  });

  t.test(`${name}: the upstream side`, async (t) => {
    const { upstream } = dialect;
    for (const stream of [false, true]) {
      const url = new URL(upstream.endpoint(BASE, { model: 'm', stream }));
      t.equal(url.host, 'upstream.example', `the endpoint is under base_url (stream: ${stream})`);
    }
    if (upstream.countTokensEndpoint)
      t.equal(new URL(upstream.countTokensEndpoint(BASE)).host, 'upstream.example', 'so is the count_tokens endpoint');
    const headers = upstream.headers(KEY, undefined, LIMITS);
    t.ok(
      Object.values(headers).some((v) => v.includes(KEY)),
      'the key goes in a header',
    );
    t.notOk(
      Object.values(upstream.headers(undefined, undefined, LIMITS)).some((v) => v.includes(KEY)),
      'no key, no key header',
    );

    const body = dialect.buildRequest(IR_REQUEST, 'upstream-model');
    t.ok(JSON.stringify(body).includes('Hi'), 'an IR request becomes a body carrying its prompt');
    upstream.setOutputCap(body, 4321, { host: 'upstream.example' }, 'upstream-model');
    t.ok(
      pathsOf(body, 4321).length > 0,
      `the output cap is set in the provider's field (${pathsOf(body, 4321).join(', ')})`,
    );

    // What the client half writes, the upstream half reads: the same wire both ways.
    const c = ctx(dialect);
    const answer = dialect.renderResponse(IR_ANSWER, c) as Record<string, unknown>;
    const parsed = dialect.parseResponse(answer);
    t.same(parsed.content, IR_ANSWER.content, 'a whole answer: its content read back');
    t.match(parsed.usage, { input: 11, output: 7 }, 'and its usage');
    const passed = upstream.passThroughWhole(JSON.stringify(answer), answer, c);
    t.match(passed.usage, { input: 11, output: 7 }, 'the pass-through reader finds the usage');

    const wire = Buffer.concat(await lastValueFrom(from(IR_STREAM).pipe(dialect.encodeStream(c), toArray())));
    const events = await lastValueFrom(from([wire]).pipe(parseSSE(), dialect.decodeStream(), toArray()));
    t.equal(textOf(events), 'Hello there', 'a stream: its text read back');
    t.ok(
      events.some((e) => e.type === 'stop' || e.type === 'end'),
      'and its end',
    );
  });

  t.test(`${name}: error mapping`, async (t) => {
    const err = new GatewayError('invalid_request', 'Something is wrong with the request.');
    const { status, body } = dialect.errorResponse(err, 'req_registry');
    t.equal(status, 400, 'a gateway error keeps its status');
    t.equal(
      dialect.upstreamErrorMessage(body),
      'Something is wrong with the request.',
      'an upstream of the dialect saying it is read back',
    );
    t.ok(dialect.errorEvent(err, 'req_registry', ctx(dialect)).length > 0, 'a mid-stream error event');
  });

  t.test(`${name}: the surface, if served`, async (t) => {
    const { surface } = dialect;
    const expected = PUBLIC[name];
    if (!surface) {
      t.equal(expected, undefined, 'a dialect the public table serves has a surface');
      return;
    }
    t.equal(
      surface.name,
      expected.surface,
      "the usage record's `surface` (public: stored rows and the API docs name it)",
    );
    t.equal(surface.path, expected.path, 'the inference route (public)');
    t.type(surface.missingKey, 'string');
    for (const fn of REQUIRED.surface) t.type(surface[fn], 'function', `surface.${fn}`);
    for (const fn of REQUIRED.surfaceOptional)
      t.ok(surface[fn] === undefined || typeof surface[fn] === 'function', `surface.${fn}, if any`);
    if (surface.models) {
      t.type(surface.models.path, 'string');
      for (const fn of ['asks', 'list', 'one'] as const) t.type(surface.models[fn], 'function', `surface.models.${fn}`);
    }
    t.not(surface.newId(), surface.newId(), 'answer ids differ');
    t.type(surface.answerHeaders('req_registry'), 'object');
  });

  t.test(`${name}: embeddings, if its providers serve them`, async (t) => {
    const meta = DIALECT_METAS.find((m) => m.name === name)!;
    const adapter = dialect.embeddings;
    t.equal(adapter !== undefined, meta.embeddings, 'an adapter exactly when meta.ts says so');
    t.equal(embeddingsUpstream(name), adapter, 'and it is the one POST /v1/embeddings calls');
    if (!adapter) return;
    for (const fn of REQUIRED.embeddings) t.type(adapter[fn], 'function', `embeddings.${fn}`);
    t.ok(Number.isInteger(adapter.maxInputs) && adapter.maxInputs > 0, 'maxInputs');
    t.type(adapter.takesTokens, 'boolean');
    t.equal(new URL(adapter.endpoint(BASE, 'e')).host, 'upstream.example');
    t.ok(
      Object.values(adapter.headers(KEY)).some((v) => v.includes(KEY)),
      'the key goes in a header',
    );
    const { request } = parseEmbeddingsRequest({ model: 'x', input: ['a', 'b'] });
    t.ok(JSON.stringify(adapter.body(request, 'e')).includes('"a"'), 'the inputs go in the body');
    t.equal(adapter.parse({ error: { message: 'no' } }), undefined, 'an error body is no answer');
  });
}

t.test('the lists derived from the registry match it', async (t) => {
  t.same(DIALECT_NAMES, names, "the catalogue's dialect names, in the registry's order");
  t.same(
    DIALECT_METAS.map((m) => m.name),
    names,
    'the registry lists the same dialects, in its order',
  );
  t.same(Object.keys(PUBLIC), names, 'every dialect has its row in the public table');
  t.same(
    EMBEDDING_DIALECT_NAMES,
    names.filter((n) => DIALECTS[n].embeddings !== undefined),
    'the embedding dialects are those with an adapter',
  );
  t.same(Object.keys(EMBEDDINGS), EMBEDDING_DIALECT_NAMES, "the adapters' registry is theirs");
  t.equal(embeddingsUpstream('nope'), undefined);
  t.equal(embeddingsUpstream('__proto__'), undefined, 'only own names');

  const surfaces = registered.flatMap(([, d]) => (d.surface ? [d.surface.name] : []));
  t.same(
    SURFACE_NAMES,
    [...surfaces, EMBEDDINGS_SURFACE],
    "the usage record's surface values: each served dialect's, and embeddings",
  );
  t.equal(new Set(SURFACE_NAMES).size, SURFACE_NAMES.length, 'no two surfaces share a name');
});

t.test("the reasoning-model default is the union of the vendors' patterns", async (t) => {
  for (const meta of DIALECT_METAS) {
    const own = meta.reasoningModels;
    if (!own) continue;
    t.equal(own.flags, '', `${meta.name}: no flags (the union is case-insensitive)`);
    t.notMatch(own.source, /^\^|\$$/, `${meta.name}: no anchors (the union anchors at the start or after a /)`);
    t.ok(REASONING_MODEL_PATTERNS.includes(own), `${meta.name}: its pattern is in the union`);
    const samples = REASONING_SAMPLES[meta.name]!;
    for (const model of samples.reasons) t.ok(REASONING_MODEL.test(model), `${model} reasons`);
    for (const model of samples.not) t.notOk(REASONING_MODEL.test(model), `${model} does not`);
  }
  t.equal(
    new Set(REASONING_MODEL_PATTERNS.map((p) => p.source)).size,
    REASONING_MODEL_PATTERNS.length,
    "each vendor's pattern once",
  );
  t.notOk(REASONING_MODEL.test('my-o3-clone'), 'only at the start of the name or after a /');
  t.ok(REASONING_MODEL.test('GPT-5'), 'case-insensitively');
});
