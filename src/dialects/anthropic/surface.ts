// The gateway's /v1/messages: how its clients send the key, how its ids look, its keep-alive
// ping, and what its options cost beyond the prompt (the terms' Messages-specific part).

import type { Model } from '../../catalogue/index.js';
import { encodeSSE } from '../../stream/sse.js';
import { bearer, randomBase62 } from '../../wire.js';
import type { ClientSide, ClientTerms, DialectLimits } from '../dialect.js';
import { dropEmptyTools, dropUnsold, notSold, refuse } from '../refusals.js';
import { anthropicHeaders } from './headers.js';

type Body = Record<string, unknown>;

/** Anthropic tools that run on the client (priced as tokens); other typed tools run server-side. */
const CLIENT_TOOL = /^(?:custom|bash_\d+|text_editor_\d+|computer_\d+|memory_\d+)$/;

const SERVER_TOOL_FAMILY: [RegExp, string][] = [
  [/^web_fetch_/, 'web_fetch'],
  [/^code_execution_/, 'code_execution'],
  [/^tool_search_tool_/, 'tool_search'],
  [/^mcp_toolset$/, 'mcp'],
];

function clientTerms(body: Body, model: Model, headers: Record<string, string>, limits: DialectLimits): ClientTerms {
  const { pricing, officialPricing } = model;
  let holdFees = 0n;
  const droppedNames: string[] = [];
  const outputCap = Math.min(
    model.maxOutputTokens,
    typeof body.max_tokens === 'number' ? body.max_tokens : model.maxOutputTokens,
  );
  const hosted: string[] = [];
  const dropped = Array.isArray(body.tools)
    ? dropUnsold(body.tools as (Body | null)[], (tool) => {
        const type = tool?.type;
        if (type === undefined || type === null || (typeof type === 'string' && CLIENT_TOOL.test(type)))
          return undefined;
        if (typeof type !== 'string') throw refuse('tools', 'tools: a tool\'s "type" is a string.');
        if (type.startsWith('web_search_') && pricing.perWebSearch > 0n) {
          const uses =
            typeof tool!.max_uses === 'number' && tool!.max_uses > 0 ? tool!.max_uses : model.webSearchMaxCalls;
          holdFees += pricing.perWebSearch * BigInt(uses);
          hosted.push(type);
          return undefined;
        }
        const family = SERVER_TOOL_FAMILY.find(([re]) => re.test(type))?.[1];
        if (family && model.serverTools.has(family)) {
          hosted.push(type);
          return undefined;
        }
        if (typeof tool!.name === 'string') droppedNames.push(tool!.name);
        return type;
      })
    : [];
  const choice = body.tool_choice as Body | null | undefined;
  if (choice?.type === 'tool' && typeof choice.name === 'string' && droppedNames.includes(choice.name)) {
    throw notSold('tool_choice', `The server tool ${JSON.stringify(choice.name)}`, model);
  }
  if (dropped.length > 0) dropEmptyTools(body, 'tools', 'tool_choice');
  if (body.mcp_servers !== undefined && body.mcp_servers !== null && !model.serverTools.has('mcp'))
    throw notSold('mcp_servers', 'Remote MCP servers', model);
  if (body.container !== undefined && body.container !== null && !model.serverTools.has('code_execution'))
    throw notSold('container', 'A code execution container', model);
  // Fast mode is billed at a premium, asked for by the body on models that need no beta for it:
  // sold only where the catalogue entry's prices cover the fast-mode beta.
  if (
    body.speed !== undefined &&
    body.speed !== null &&
    body.speed !== 'standard' &&
    !model.pricedBetas.some((p) => p.startsWith('fast-mode'))
  ) {
    throw notSold('speed', `speed ${JSON.stringify(body.speed)}`, model);
  }
  const forwardHeaders = anthropicHeaders(headers, model, limits);
  return {
    pricing,
    officialPricing,
    outputCap,
    n: 1,
    extraOutput: 0,
    feeNano: 0n,
    holdFees,
    audioIn: false,
    audioOut: false,
    forwardHeaders,
    hosted,
    dropped,
  };
}

export const surface: ClientSide = {
  name: 'messages',
  path: '/v1/messages',
  // Older SDKs send x-api-key, recent ones Authorization: Bearer (API.md §1).
  key: (ex) => ex.headers['x-api-key']?.trim() || bearer(ex.headers.authorization),
  missingKey: 'Missing API key: send it as "x-api-key: ar-…" or "Authorization: Bearer ar-…".',
  newId: () => `msg_${randomBase62(24)}`,
  // Anthropic names every answer's id in `request-id`, which its SDK reads (`_request_id`,
  // `requestID`): on answers and errors alike.
  answerHeaders: (requestId) => ({ 'request-id': requestId }),
  ping: encodeSSE('{"type":"ping"}', 'ping'),
  forwardHeaders: anthropicHeaders,
  clientTerms,
};
