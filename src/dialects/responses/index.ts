// The OpenAI Responses API: the gateway's /v1/responses surface (Codex, the Agents SDK, the AI
// SDK's default provider) and the upstream dialect of providers served only that way.

import type { DialectOf } from '../dialect.js';
import { errorEvent, errorResponse, upstreamErrorMessage } from './errors.js';
import { promptParts } from './prompt.js';
import { buildRequest, parseRequest } from './request.js';
import { parseResponse, renderResponse } from './response.js';
import { decodeStream } from './stream-decode.js';
import { encodeStream } from './stream-encode.js';
import { surface } from './surface.js';
import { upstream } from './upstream.js';
import { meta } from './meta.js';

export const responses: DialectOf<typeof meta> = {
  name: meta.name,
  surface,
  upstream,
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
