// Google's Gemini API: the gateway's /v1beta/models/{model}:generateContent surface (the
// @google/genai SDK, Gemini CLI) and the upstream dialect of Gemini providers.

import type { DialectOf } from '../dialect.js';
import { buildRequest } from './build.js';
import { errorEvent, errorResponse, upstreamErrorMessage } from './errors.js';
import { promptParts } from './prompt.js';
import { parseRequest } from './request.js';
import { parseResponse, renderResponse } from './response.js';
import { decodeStream } from './stream-decode.js';
import { encodeStream } from './stream-encode.js';
import { surface } from './surface.js';
import { upstream } from './upstream.js';
import { geminiEmbeddings } from './embeddings.js';
import { meta } from './meta.js';

export const gemini: DialectOf<typeof meta> = {
  name: meta.name,
  surface,
  upstream,
  embeddings: geminiEmbeddings,
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
