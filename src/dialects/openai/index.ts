// OpenAI chat completions: the gateway's /v1/chat/completions surface and the upstream
// dialect of every OpenAI-compatible provider.

import type { DialectOf } from '../dialect.js';
import { buildRequest } from './build.js';
import { errorEvent, errorResponse, upstreamErrorMessage } from './errors.js';
import { parseRequest } from './request.js';
import { promptParts } from './prompt.js';
import { parseResponse, renderResponse } from './response.js';
import { decodeStream } from './stream-decode.js';
import { encodeStream } from './stream-encode.js';
import { surface } from './surface.js';
import { upstream } from './upstream.js';
import { openaiEmbeddings } from './embeddings.js';
import { meta } from './meta.js';

export const openai: DialectOf<typeof meta> = {
  name: meta.name,
  surface,
  upstream,
  embeddings: openaiEmbeddings,
  parseRequest,
  renderResponse,
  encodeStream,
  errorResponse,
  errorEvent,
  buildRequest,
  parseResponse,
  decodeStream,
  upstreamErrorMessage,
  promptParts,
};

export { RAW_ARGUMENTS_KEY } from './shared.js';
