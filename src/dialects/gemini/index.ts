// Google's Gemini API: the gateway's /v1beta/models/{model}:generateContent surface (the
// @google/genai SDK, Gemini CLI) and the upstream dialect of Gemini providers.

import type { Dialect } from '../dialect.js';
import { buildRequest } from './build.js';
import { errorEvent, errorResponse, upstreamErrorMessage } from './errors.js';
import { promptParts } from './prompt.js';
import { parseRequest } from './request.js';
import { parseResponse, renderResponse } from './response.js';
import { decodeStream } from './stream-decode.js';
import { encodeStream } from './stream-encode.js';
import { surface } from './surface.js';
import { upstream } from './upstream.js';

export const gemini: Dialect = {
  name: 'gemini',
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
