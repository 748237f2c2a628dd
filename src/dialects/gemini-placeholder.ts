// PLACEHOLDER, to be deleted when the Gemini chat dialect (src/dialects/gemini/index.ts) is
// merged: its line in index.ts replaces this one. It exists only so that a `gemini` provider can
// be listed in the catalogue on this branch, where only its embeddings adapter
// (gemini/embeddings.ts) is built. Every chat call through it is refused, with a reason.

import type { Observable } from 'rxjs';
import { GatewayError } from '../errors.js';
import type { Dialect } from './dialect.js';

const refused = (): never => {
  throw new GatewayError('upstream', 'This gateway build has no Gemini chat upstream; Gemini providers serve embeddings only.');
};

export const geminiPlaceholder: Dialect = {
  name: 'gemini',
  upstream: {
    endpoint: (baseUrl) => `${baseUrl}/v1beta/models`,
    headers: (key): Record<string, string> => (key ? { 'x-goog-api-key': key } : {}),
    setOutputCap: () => {},
    passThroughWhole: refused,
    passThroughTap: refused,
  },
  parseRequest: refused,
  renderResponse: refused,
  encodeStream: () => (source: Observable<unknown>) => source.pipe(refused as never),
  errorResponse: refused,
  errorEvent: refused,
  buildRequest: refused,
  parseResponse: refused,
  decodeStream: () => (source: Observable<unknown>) => source.pipe(refused as never),
  upstreamErrorMessage: () => undefined,
  promptParts: () => ({ images: [], overheadTokens: 0 }),
};
