// The fake's embeddings endpoints: OpenAI's `POST /v1/embeddings` and Gemini's
// `POST /v1beta/models/{model}:batchEmbedContents`. Vectors are a pure function of the input and
// the length asked for (`fakeEmbedding`), so a test can predict every number the gateway passes
// on; each value is k/1024 for a whole k, exact in float32, so base64 round trips lose nothing.
// OpenAI's answer bills the o200k tokens of each text (token arrays: their length); Gemini's,
// like the real one, says nothing of usage.
//
// Scenarios as for chat: the `x-fake-scenario` header, a `[[directive]]` in an input's text, or
// the upstream model's name: `error:STATUS`, `slow:MS`, `replay:<fixture path>`.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { parseScenario, type Scenario } from './scenarios.js';
import { errorResponse } from './wire.js';

/** Vector length when the request does not ask for one. */
export const FAKE_DIMENSIONS = 16;
const GEMINI_PATH = /^\/v1(?:alpha|beta)?\/models\/([^/]+):batchEmbedContents$/;

export type EmbeddingsEndpoint = { vendor: 'openai' } | { vendor: 'gemini'; model: string };

/** Which embeddings endpoint a request is for, if any. */
export function embeddingsEndpoint(method: string, pathname: string): EmbeddingsEndpoint | undefined {
  if (method !== 'POST') return undefined;
  if (pathname === '/v1/embeddings') return { vendor: 'openai' };
  const m = GEMINI_PATH.exec(pathname);
  return m ? { vendor: 'gemini', model: decodeURIComponent(m[1]!) } : undefined;
}

/** FNV-1a over the input's text (token arrays: their ids joined by commas). */
function seedOf(input: string | number[]): number {
  const text = typeof input === 'string' ? input : input.join(',');
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The fake's vector for an input: `dims` values k/1024, k in −1000..1000. */
export function fakeEmbedding(input: string | number[], dims = FAKE_DIMENSIONS): number[] {
  let x = seedOf(input) || 1;
  const out = new Array<number>(dims);
  for (let j = 0; j < dims; j++) {
    // xorshift32: cheap, deterministic, and different for every position.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[j] = ((x % 2001) - 1000) / 1024;
  }
  return out;
}

/** What the fake bills an input: o200k tokens of a text, the length of a token array. */
export const fakeInputTokens = (input: string | number[]) =>
  typeof input === 'string' ? countTokens(input) : input.length;

const toBase64 = (values: number[]) => {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
};

const DIRECTIVE = /\[\[([a-z_]+(?::[^\]\s]*)?)\]\]/g;

function scenarioOf(header: string | undefined, texts: string[], model: string): Scenario | undefined {
  if (header) return parseScenario(header);
  let found: Scenario | undefined;
  for (const t of texts) for (const m of t.matchAll(DIRECTIVE)) found = parseScenario(m[1]!) ?? found;
  return found ?? parseScenario(model);
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    ...headers,
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function geminiError(res: ServerResponse, status: number, message: string): void {
  send(
    res,
    status,
    JSON.stringify({ error: { code: status, message, status: GEMINI_STATUS[status] ?? 'UNKNOWN' } }, null, 2) + '\n',
  );
}

function openaiError(res: ServerResponse, status: number, message?: string): void {
  const e = errorResponse('openai', status, message);
  send(res, e.status, e.body, e.headers);
}

/** OpenAI's input forms, as the vendor reads them; a string is an error message. */
function openaiInputs(input: unknown): (string | number[])[] | string {
  const invalid =
    "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return invalid;
  if (input.every((x) => typeof x === 'number')) return [input as number[]];
  if (input.every((x) => typeof x === 'string' && x !== '')) return input as string[];
  if (input.every((x) => Array.isArray(x) && x.length > 0 && x.every((n) => typeof n === 'number')))
    return input as number[][];
  return invalid;
}

async function replay(
  res: ServerResponse,
  fixturesDir: string,
  rel: string,
  vendor: 'openai' | 'gemini',
): Promise<void> {
  const file = path.resolve(fixturesDir, rel);
  if (!file.startsWith(fixturesDir + path.sep))
    return vendor === 'openai'
      ? openaiError(res, 400, `bad replay path ${rel}`)
      : geminiError(res, 400, `bad replay path ${rel}`);
  const bytes = await readFile(file).catch(() => undefined);
  if (!bytes)
    return vendor === 'openai'
      ? openaiError(res, 404, `no fixture ${rel}`)
      : geminiError(res, 404, `no fixture ${rel}`);
  const status = Number(/(?:^|[\\/])errors[\\/](\d{3})_[^\\/]*$/.exec(rel)?.[1] ?? 200);
  send(res, status, bytes.toString());
}

/** Waits, unless the client goes first. */
function after(res: ServerResponse, ms: number, fn: () => void): void {
  const timer = setTimeout(fn, ms);
  res.once('close', () => clearTimeout(timer));
}

export async function answerEmbeddings(
  endpoint: EmbeddingsEndpoint,
  body: any,
  req: IncomingMessage,
  res: ServerResponse,
  fixturesDir: string,
): Promise<void> {
  const header = req.headers['x-fake-scenario'];
  if (endpoint.vendor === 'openai') {
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && auth.replace(/^Bearer\s+/i, '').trim() === 'bad-key') return openaiError(res, 401);
    const inputs = openaiInputs(body?.input);
    if (typeof inputs === 'string') return openaiError(res, 400, inputs);
    const model = typeof body.model === 'string' ? body.model : '';
    const scenario = scenarioOf(
      typeof header === 'string' ? header : undefined,
      inputs.filter((x): x is string => typeof x === 'string'),
      model,
    );
    if (scenario?.name === 'error') return openaiError(res, Number(scenario.arg?.split(':')[0]) || 500);
    if (scenario?.name === 'replay') return replay(res, fixturesDir, scenario.arg ?? '', 'openai');
    const dims = Number.isInteger(body.dimensions) ? body.dimensions : FAKE_DIMENSIONS;
    const base64 = body.encoding_format === 'base64';
    const tokens = inputs.reduce((n, x) => n + fakeInputTokens(x), 0);
    const answer = () =>
      send(
        res,
        200,
        JSON.stringify({
          object: 'list',
          data: inputs.map((x, index) => {
            const vector = fakeEmbedding(x, dims);
            return { object: 'embedding', index, embedding: base64 ? toBase64(vector) : vector };
          }),
          model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    return scenario?.name === 'slow' ? after(res, Number(scenario.arg) || 500, answer) : answer();
  }

  const key = req.headers['x-goog-api-key'];
  if (key === 'bad-key') return geminiError(res, 400, 'API key not valid. Please pass a valid API key.');
  const requests = body?.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    return geminiError(res, 400, '* BatchEmbedContentsRequest.requests: requests must not be empty\n');
  if (requests.length > 100)
    return geminiError(res, 400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n');
  const texts: string[] = [];
  for (const [i, r] of requests.entries()) {
    if (r?.model !== `models/${endpoint.model}`) {
      return geminiError(
        res,
        400,
        `* BatchEmbedContentsRequest.requests[${i}].model: the model of a request must be the batch's (models/${endpoint.model})\n`,
      );
    }
    const parts = r?.content?.parts;
    if (!Array.isArray(parts) || parts.some((p: any) => typeof p?.text !== 'string'))
      return geminiError(res, 400, `* BatchEmbedContentsRequest.requests[${i}].content: parts must be text\n`);
    texts.push(parts.map((p: any) => p.text).join(''));
  }
  const scenario = scenarioOf(typeof header === 'string' ? header : undefined, texts, endpoint.model);
  if (scenario?.name === 'error') {
    const status = Number(scenario.arg?.split(':')[0]) || 500;
    const message =
      status === 404
        ? `models/${endpoint.model} is not found for API version v1beta, or is not supported for embedContent. Call ModelService.ListModels to see the list of available models and their supported methods.`
        : `Fake upstream error ${status}`;
    return geminiError(res, status, message);
  }
  if (scenario?.name === 'replay') return replay(res, fixturesDir, scenario.arg ?? '', 'gemini');
  const answer = () =>
    send(
      res,
      200,
      JSON.stringify({
        embeddings: texts.map((t, i) => ({
          values: fakeEmbedding(
            t,
            Number.isInteger(requests[i].outputDimensionality) ? requests[i].outputDimensionality : FAKE_DIMENSIONS,
          ),
        })),
      }),
    );
  return scenario?.name === 'slow' ? after(res, Number(scenario.arg) || 500, answer) : answer();
}
