// POST /v1/embeddings, OpenAI's shape (docs/api.md, "Embeddings"): key, balance, body, an
// embedding model, the hold, the routes with fallback, the vectors in the encoding the client
// asked for, the charge before the answer leaves. The money path is the chat surfaces' own
// (reserve, settle with the usage record into the outbox, release on failure), so `reconcile`
// holds whatever the surface.
//
// The hold needs no tokenizer: a text input costs at most one token per UTF-8 byte (byte-level
// BPE: every token covers at least one byte), a token-id input exactly its length, and each input
// a few marker tokens on top. The charge is the upstream's `usage.prompt_tokens` when it says;
// Gemini never does, and then it is the gateway's own count (o200k, off the event loop), which is
// never more than the hold.

import * as v from 'valibot';
import { worstCase } from '../billing/money.js';
import { countTokens } from '../billing/tokens.js';
import type { Model, Route } from '../catalogue/index.js';
import {
  embeddingsUpstream,
  type EmbeddingInput,
  type EmbeddingsRequest,
  type EmbeddingsUpstream,
  type UpstreamEmbeddings,
} from '../dialects/embeddings.js';
import { EMBEDDINGS_SURFACE } from '../dialects/index.js';
import { ZERO_USAGE } from '../dialects/ir.js';
import { GatewayError } from '../errors.js';
import type { Exchange } from '../server/exchange.js';
import type { Gateway } from '../services.js';
import { BodyTooLargeError } from '../upstream/client.js';
import type { UpstreamCall } from '../upstream/router.js';
import { clientErrorFromUpstream } from './handle.js';
import { billed, findModelOfKind, fundedJson, reserveHold } from './pipeline.js';
import { addProviderHeaders } from '../upstream/provider-keys.js';
import { settleBeforeAnswer, type Billable } from './job.js';
import type { RequestLine } from './request-log.js';
import { CHAT, MESSAGES, type Surface } from './surfaces.js';
import type { Terms } from './terms.js';

/** OpenAI's limit on inputs per request. */
export const MAX_INPUTS = 2048;
/**
 * Tokens held per input on top of its own: markers a vendor may add around each input (BERT-style
 * models served behind OpenAI-compatible APIs add [CLS] and [SEP]). Held, never charged.
 */
export const PER_INPUT_TOKENS = 4;
/** The largest token id taken: above every vendor's vocabulary (o200k's is about 200,000). */
const MAX_TOKEN_ID = 2 ** 31 - 1;
/** 2,048 vectors of 3,072 floats as JSON text run to ~75 MB; a base64 answer to half that. */
const MAX_UPSTREAM_BODY = 256 * 1024 * 1024;

/**
 * The chat surface's envelope and bearer key, and `x-api-key` as on /v1/messages: clients of
 * embeddings are OpenAI's SDK and its imitators, but a key sent the Anthropic way costs nothing
 * to accept. The name is the usage record's `surface`.
 */
export const EMBEDDINGS: Surface = {
  ...CHAT,
  name: EMBEDDINGS_SURFACE,
  path: '/v1/embeddings',
  key: MESSAGES.key,
  missingKey: 'Missing API key: send it as "Authorization: Bearer ar-…" (or "x-api-key: ar-…").',
};

const invalid = (message: string, param: string) =>
  new GatewayError('invalid_request', message, { param, code: 'invalid_value' });

const Body = v.object({
  // Both optional here so that a missing one is worded like the rest, below.
  model: v.optional(v.string("'model' must be a string naming a catalogue model")),
  input: v.optional(v.unknown()),
  dimensions: v.optional(
    v.pipe(
      v.number("'dimensions' must be a number"),
      v.integer("'dimensions' must be a whole number"),
      v.minValue(1, "'dimensions' must be at least 1"),
    ),
  ),
  encoding_format: v.optional(
    v.picklist(['float', 'base64'], '\'encoding_format\' must be "float" or "base64"'),
    'float',
  ),
  user: v.optional(v.string("'user' must be a string")),
});

const isTokenId = (x: unknown) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= MAX_TOKEN_ID;

function tokenArray(x: unknown[], param: string): number[] {
  if (x.length === 0) throw invalid(`'${param}' is an empty token array: each input needs at least one token.`, param);
  const bad = x.findIndex((t) => !isTokenId(t));
  if (bad >= 0)
    throw invalid(
      `'${param}[${bad}]' is not a token id: token arrays hold whole numbers from 0 to ${MAX_TOKEN_ID}.`,
      `${param}[${bad}]`,
    );
  return x as number[];
}

/** OpenAI's four input forms: a string, strings, one token array, token arrays. */
function inputsOf(input: unknown): { inputs: EmbeddingInput[]; tokenInputs: boolean } {
  const expected =
    "'input' must be a string, an array of strings, an array of token ids, or an array of token-id arrays.";
  if (typeof input === 'string') {
    if (input === '') throw invalid("'input' is an empty string: there is nothing to embed.", 'input');
    return { inputs: [input], tokenInputs: false };
  }
  if (!Array.isArray(input)) throw invalid(input === undefined ? "'input' is required." : expected, 'input');
  if (input.length === 0) throw invalid("'input' is an empty array: there is nothing to embed.", 'input');
  if (typeof input[0] === 'number') return { inputs: [tokenArray(input, 'input')], tokenInputs: true };
  if (input.length > MAX_INPUTS)
    throw invalid(`'input' has ${input.length} items; at most ${MAX_INPUTS} are accepted per request.`, 'input');
  if (typeof input[0] === 'string') {
    input.forEach((s, i) => {
      if (typeof s !== 'string')
        throw invalid(
          `'input[${i}]' is not a string; an array of inputs holds strings only, or token arrays only.`,
          `input[${i}]`,
        );
      if (s === '') throw invalid(`'input[${i}]' is an empty string: every input needs some text.`, `input[${i}]`);
    });
    return { inputs: input as string[], tokenInputs: false };
  }
  if (Array.isArray(input[0])) {
    const inputs = input.map((x, i) => {
      if (!Array.isArray(x))
        throw invalid(
          `'input[${i}]' is not a token array; an array of inputs holds strings only, or token arrays only.`,
          `input[${i}]`,
        );
      return tokenArray(x, `input[${i}]`);
    });
    return { inputs, tokenInputs: true };
  }
  throw invalid(expected, 'input');
}

export function parseEmbeddingsRequest(body: unknown): { model: string; request: EmbeddingsRequest } {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  const parsed = v.safeParse(Body, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const param = issue.path?.map((p) => String((p as { key: unknown }).key)).join('.') || undefined;
    throw new GatewayError('invalid_request', issue.message, { param, code: 'invalid_value' });
  }
  const { model, input, dimensions, encoding_format: encodingFormat } = parsed.output;
  if (model === undefined)
    throw invalid('\'model\' is required: a catalogue model of kind "embedding" (GET /v1/models).', 'model');
  return { model, request: { body: body as Record<string, unknown>, ...inputsOf(input), dimensions, encodingFormat } };
}

/** The most input tokens a request can be billed for (see the top of the file). */
export function embeddingTokenBound(inputs: EmbeddingInput[]): number {
  let tokens = inputs.length * PER_INPUT_TOKENS;
  for (const x of inputs) tokens += typeof x === 'string' ? Buffer.byteLength(x) : x.length;
  return tokens;
}

/** The gateway's own count, for an upstream that reports none: o200k for text, the ids themselves for token arrays. */
export async function countEmbeddingInputs(inputs: EmbeddingInput[]): Promise<number> {
  const counts = await Promise.all(inputs.map((x) => (typeof x === 'string' ? countTokens(x) : x.length)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Floats as little-endian float32, base64: what OpenAI answers for `encoding_format: "base64"`. */
export function floatsToBase64(values: number[]): string {
  const buf = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) buf.writeFloatLE(values[i]!, i * 4);
  return buf.toString('base64');
}

/**
 * Base64 float32 back to numbers, each the exact value of its float32 (what the SDKs give when
 * they decode it themselves); undefined when the text is not whole float32s.
 */
export function base64ToFloats(text: string): number[] | undefined {
  const buf = Buffer.from(text, 'base64');
  if (buf.length % 4 !== 0) return undefined;
  const out = new Array<number>(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

function encoded(vector: number[] | string, format: 'float' | 'base64'): number[] | string {
  if (format === 'base64') return typeof vector === 'string' ? vector : floatsToBase64(vector);
  if (typeof vector !== 'string') return vector;
  const floats = base64ToFloats(vector);
  if (!floats)
    throw new GatewayError('upstream', 'The upstream answered with an embedding that is not base64 float32.');
  return floats;
}

/** The routes whose upstream can take this request; none is the client's 400, worded with why. */
function servingRoutes(model: Model, req: EmbeddingsRequest): Route[] {
  const adapter = (r: Route) => embeddingsUpstream(r.provider.dialect)!;
  const tokens = req.tokenInputs ? model.routes.filter((r) => adapter(r).takesTokens) : model.routes;
  if (tokens.length === 0) {
    throw invalid(
      `The model "${model.id}" is served by upstreams that embed text only: send 'input' as strings, not token ids.`,
      'input',
    );
  }
  const fit = tokens.filter((r) => req.inputs.length <= adapter(r).maxInputs);
  if (fit.length === 0) {
    const most = Math.max(...tokens.map((r) => adapter(r).maxInputs));
    throw invalid(
      `The model "${model.id}" takes at most ${most} inputs per request; this one has ${req.inputs.length}. Send them in smaller batches.`,
      'input',
    );
  }
  return fit;
}

function upstreamCall(
  route: Route,
  key: string | undefined,
  req: EmbeddingsRequest,
  adapter: EmbeddingsUpstream,
): UpstreamCall {
  const provider = route.provider;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...adapter.headers(key),
  };
  addProviderHeaders(headers, provider);
  return {
    url: adapter.endpoint(provider.baseUrl, route.model),
    headers,
    body: JSON.stringify(adapter.body(req, route.model)),
  };
}

interface EmbeddingJob extends Billable {
  request: EmbeddingsRequest;
  terms: Terms;
}

export function handleEmbeddings(gw: Gateway, ex: Exchange): Promise<void> {
  return billed(gw, ex, EMBEDDINGS.name, (line) => admit(gw, ex, line), run);
}

async function admit(gw: Gateway, ex: Exchange, line: RequestLine): Promise<EmbeddingJob> {
  const { identity, body } = await fundedJson(gw, ex, EMBEDDINGS, line);
  const { model: modelId, request } = parseEmbeddingsRequest(body);
  line.model = modelId;
  const model = findModelOfKind(gw, modelId, 'embedding');
  if (request.dimensions !== undefined && model.dimensions !== undefined && request.dimensions > model.dimensions) {
    throw invalid(
      `'dimensions' is ${request.dimensions}; "${model.id}" gives vectors of at most ${model.dimensions}.`,
      'dimensions',
    );
  }
  const hold = worstCase(embeddingTokenBound(request.inputs), 0, model.pricing.input, 0n);
  const terms: Terms = {
    pricing: model.pricing,
    officialPricing: model.officialPricing,
    outputCap: 0,
    n: 1,
    feeNano: 0n,
    hostedFee: 0n,
    hosted: [],
    dropped: [],
    hold,
  };
  const reservation = await reserveHold(gw, identity, hold);
  return { gw, ex, identity, model, reservation, line, terms, request, surface: EMBEDDINGS, ir: { stream: false } };
}

/**
 * The routes in turn, then the answer. No abort signal goes upstream: once sent, the request is
 * billed by the vendor whether or not the client waits, so it is read to its end and charged as
 * it reports; a client gone by then is recorded as 499.
 */
async function run(job: EmbeddingJob): Promise<void> {
  const { gw, ex, model, request } = job;
  const routes = servingRoutes(model, request);
  // When every route fails this throws: nothing was embedded, so the hold is released uncharged.
  const { route, response } = await gw.routes.forward(
    routes.length === model.routes.length ? model : { ...model, routes },
    (r, key) => upstreamCall(r, key, request, embeddingsUpstream(r.provider.dialect)!),
  );
  if (response.status >= 400) {
    const text = await response.body.text().catch(() => '');
    throw clientErrorFromUpstream(response.status, text);
  }
  job.line.route = route.key;
  let text: string;
  try {
    text = await response.body.text(MAX_UPSTREAM_BODY);
  } catch (err) {
    // As chat's whole answers: the upstream had the request, so a client already gone pays its input.
    if (ex.aborted) return chargeCounted(job);
    throw err instanceof BodyTooLargeError
      ? new GatewayError('upstream', 'The upstream answer is too large.')
      : new GatewayError('upstream', 'The upstream connection failed while answering.');
  }
  let parsed: UpstreamEmbeddings | undefined;
  try {
    parsed = embeddingsUpstream(route.provider.dialect)!.parse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.vectors.length !== request.inputs.length) {
    throw new GatewayError(
      'upstream',
      `The upstream did not answer with ${request.inputs.length} embedding${request.inputs.length === 1 ? '' : 's'}.`,
    );
  }
  const data = parsed.vectors.map((vector, index) => ({
    object: 'embedding',
    index,
    embedding: encoded(vector, request.encodingFormat),
  }));
  const promptTokens = parsed.promptTokens ?? (await countEmbeddingInputs(request.inputs));
  await settleBeforeAnswer(job, { ...ZERO_USAGE, input: promptTokens }, ex.aborted ? 499 : 200);
  const out = {
    object: 'list',
    data,
    model: model.id,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
  ex.send(200, JSON.stringify(out), { 'content-type': 'application/json' });
}

/** The client left while the answer came, and with it the upstream's count: the input as the gateway counts it. */
async function chargeCounted(job: EmbeddingJob): Promise<void> {
  await settleBeforeAnswer(job, { ...ZERO_USAGE, input: await countEmbeddingInputs(job.request.inputs) }, 499);
}
