// The Anthropic Messages dialect: the gateway's /v1/messages surface and Anthropic-speaking upstreams.

import type { DialectOf } from '../dialect.js';
import { errorEvent, errorResponse, upstreamErrorMessage } from './errors.js';
import { buildRequest, parseRequest } from './request.js';
import { promptParts } from './prompt.js';
import { parseResponse, renderResponse } from './response.js';
import { decodeStream } from './stream-decode.js';
import { encodeStream } from './stream-encode.js';
import { surface } from './surface.js';
import { upstream } from './upstream.js';
import { meta } from './meta.js';

export const anthropic: DialectOf<typeof meta> = {
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
