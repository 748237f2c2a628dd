// The gateway's Gemini surface: `POST /v1beta/models/{model}:{method}` (generateContent,
// streamGenerateContent with or without `alt=sse`, countTokens), the catalogue as
// `GET /v1beta/models`, the key as Google's clients send it, and what a request costs beyond its
// prompt. The `/v1/` spelling of each path is served too (Gemini has both versions).

import type { Model } from '../../catalogue/index.js';
import { GatewayError } from '../../errors.js';
import type { Exchange } from '../../server/exchange.js';
import { bearer, decodeSegment, randomBase62 } from '../../wire.js';
import type { ClientSide, ClientTerms, DialectLimits, SurfaceCall } from '../dialect.js';
import { dropEmptyTools, dropUnsold, notSold, refuse } from '../refusals.js';
import { field, keyOf, record } from './fields.js';
import { ARRAY_TYPE } from './framing.js';

type Body = Record<string, unknown>;

const MILLION = 1_000_000n;
const PREFIX = /^\/v1(?:beta)?\/models\//;
const SEARCH = new Set(['googleSearch', 'google_search', 'googleSearchRetrieval', 'google_search_retrieval']);
const CLIENT_TOOL = new Set(['functionDeclarations', 'function_declarations']);

/** `…/models/{model}:{method}` → what the call is. The model may hold `/` and `:`: the method follows the last colon. */
function call(ex: Exchange): SurfaceCall {
  // `models/` once more is how the SDKs name a model (`models/gemini-2.5-flash`).
  const rest = ex.path.replace(PREFIX, '').replace(/^models\//, '');
  const colon = rest.lastIndexOf(':');
  const model = decodeSegment(colon < 0 ? rest : rest.slice(0, colon));
  const method = colon < 0 ? '' : rest.slice(colon + 1);
  // Nothing of the client's query reaches an upstream: `alt` is the gateway's, `key` the client's secret.
  // Every call one literal of one shape: a stream keeps its call, and `{ ...base, method }` gave
  // each copy a hidden class of its own on Node 20.
  if (method === 'generateContent')
    return { method: 'generate', model, stream: false, streamType: undefined, query: '' };
  if (method === 'streamGenerateContent') {
    const streamType = ex.query.get('alt') === 'sse' ? undefined : ARRAY_TYPE;
    return { method: 'generate', model, stream: true, streamType, query: '' };
  }
  if (method === 'countTokens')
    return { method: 'count_tokens', model, stream: false, streamType: undefined, query: '' };
  throw new GatewayError(
    'not_found',
    `No such method: ${JSON.stringify(method)}. This gateway serves generateContent, streamGenerateContent and countTokens.`,
    { code: 'unknown_url' },
  );
}

function clientTerms(body: Body, model: Model, _headers: Record<string, string>, _limits: DialectLimits): ClientTerms {
  const { pricing, officialPricing } = model;
  const gen = record(field(body, 'generationConfig'));
  const cap = field(gen, 'maxOutputTokens');
  const outputCap = Math.min(model.maxOutputTokens, typeof cap === 'number' ? cap : model.maxOutputTokens);
  const candidates = field(gen, 'candidateCount');
  if (typeof candidates === 'number' && candidates > 1)
    throw refuse(
      'generationConfig.candidateCount',
      'generationConfig.candidateCount: only one candidate per request is served by this gateway.',
    );
  // Thoughts are output, and maxOutputTokens is observed to bound them (a thinking model that hits
  // it answers MAX_TOKENS with thoughts only); Google's docs call the budget separate, so an explicit
  // budget is held for on top, in case a model counts it apart.
  const budget = field(record(field(gen, 'thinkingConfig')), 'thinkingBudget');
  const extraOutput =
    typeof budget === 'number' && budget > 0 ? Math.min(Math.floor(budget), model.maxOutputTokens) : 0;
  let feeNano = 0n;
  let holdFees = 0n;
  const hosted: string[] = [];
  const dropped: string[] = [];
  const tools = field(body, 'tools');
  if (Array.isArray(tools)) {
    // A tool entry may hold several tools (functions beside a search): the unsold ones are taken
    // out of it, and an entry left empty goes too.
    dropUnsold(tools, (tool) => {
      const entry = record(tool);
      if (!entry) return undefined;
      const keys = Object.keys(entry);
      for (const key of keys) {
        if (CLIENT_TOOL.has(key)) continue;
        if (SEARCH.has(key) && pricing.perWebSearch > 0n) {
          // As the chat surface's web_search_options: its price once per request.
          feeNano = pricing.perWebSearch;
          hosted.push(key);
          continue;
        }
        delete entry[key];
        dropped.push(key);
      }
      return keys.length > 0 && Object.keys(entry).length === 0 ? 'empty' : undefined;
    });
    if (dropped.length > 0) dropEmptyTools(body, keyOf(body, 'tools'), keyOf(body, 'toolConfig'));
  }
  // A file the body only names (Files API, Cloud Storage) can be any length: only images are bounded.
  const contents = field(body, 'contents');
  (Array.isArray(contents) ? contents : []).forEach((c, i) => {
    const parts = record(c)?.parts;
    (Array.isArray(parts) ? parts : []).forEach((p, j) => {
      const file = record(field(p, 'fileData'));
      const mime = field(file, 'mimeType');
      if (file && !(typeof mime === 'string' && /^image\//i.test(mime))) {
        throw notSold(
          `contents[${i}].parts[${j}].fileData`,
          `A file by reference (${typeof mime === 'string' ? mime : 'of unknown type'}), whose length the gateway cannot see,`,
          model,
        );
      }
    });
  });
  // An explicit cache's tokens are billed as cache reads and are not in the body: held for a whole context window of them.
  if (typeof field(body, 'cachedContent') === 'string') {
    const lc = pricing.longContext?.prices.cacheRead ?? 0n;
    const price = lc > pricing.cacheRead ? lc : pricing.cacheRead;
    holdFees += (BigInt(model.contextWindow) * price + MILLION - 1n) / MILLION;
  }
  return {
    pricing,
    officialPricing,
    outputCap,
    n: 1,
    extraOutput,
    feeNano,
    holdFees,
    audioIn: false,
    audioOut: false,
    hosted,
    dropped,
  };
}

const METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

function modelEntry(m: Model) {
  return {
    name: `models/${m.id}`,
    baseModelId: m.id,
    version: '001',
    displayName: m.displayName,
    description: `${m.displayName}, served by airouter.`,
    inputTokenLimit: m.contextWindow,
    outputTokenLimit: m.maxOutputTokens,
    supportedGenerationMethods: METHODS,
  };
}

/** Google's paging: `pageSize` (default 50, at most 1000) and the `nextPageToken` of the page before. */
function list(models: readonly Model[], query: URLSearchParams) {
  const size = Math.min(1000, Math.max(1, Number(query.get('pageSize')) || 50));
  const from = Math.max(0, Number(query.get('pageToken')) || 0);
  const page = models.slice(from, from + size).map(modelEntry);
  return from + size < models.length ? { models: page, nextPageToken: String(from + size) } : { models: page };
}

export const surface: ClientSide = {
  name: 'gemini',
  path: '/v1beta/models/*',
  paths: ['/v1/models/*'],
  call,
  // The SDK's default version is v1: its list comes to the shared /v1/models, known by its key header.
  models: {
    path: '/v1beta/models',
    asks: (ex) => ex.headers['x-goog-api-key'] !== undefined || ex.query.has('key'),
    list,
    one: modelEntry,
  },
  countAnswer: (tokens) => ({ totalTokens: tokens }),
  // Google's SDKs send x-goog-api-key; REST examples use ?key=; OpenAI-minded clients a bearer token.
  key: (ex) => ex.headers['x-goog-api-key']?.trim() || ex.query.get('key')?.trim() || bearer(ex.headers.authorization),
  missingKey: 'Missing API key: send it as "x-goog-api-key: ar-…", as ?key=ar-…, or as "Authorization: Bearer ar-…".',
  newId: () => randomBase62(22),
  answerHeaders: (): Record<string, string> => ({}),
  clientTerms,
};
